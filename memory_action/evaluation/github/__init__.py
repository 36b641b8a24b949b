"""A stateful fake of GitHub's REST and GraphQL API, checked on every request and answer against
GitHub's published descriptions (``contract``), served over a socket (``http``)."""

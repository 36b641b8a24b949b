"""Everything that talks to GitHub's API, and no run logic: ``client`` (PyGithub: the pull
request, the sticky comment, permissions, identity), ``reviews`` (reviews with inline comments,
their feedback, comparisons) and ``promotion`` (merged pull requests, comment edit history,
workflow runs). Nothing is imported here: PyGithub loads slowly, and ``promotion``'s pure helpers
are used where the client is not."""

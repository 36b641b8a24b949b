"""Everything that talks to GitHub's API, and no run logic: ``client`` (the pull request, the
sticky comment, permissions, identity) over ``api`` (the PyGithub handle and its errors in one
line), ``reviews`` (reviews with inline comments, their feedback, comparisons), ``after_merge``
(merged pull requests, comment edit history, workflow runs), ``base_files`` and
``base_sources`` (files at the base commit), ``pull_request`` (the pull request's types).
Nothing is imported here: PyGithub loads slowly."""

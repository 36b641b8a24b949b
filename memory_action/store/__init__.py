"""Where memory lives between runs: the Actions cache (v2 and v1), a git branch, or a local
directory; what a store needs of the run comes in as plain values (``StoreLog``, ``Secret``)."""

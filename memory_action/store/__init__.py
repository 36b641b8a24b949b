"""Where memory lives between runs: the Actions cache, or a local directory."""

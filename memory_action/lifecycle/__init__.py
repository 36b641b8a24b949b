"""Memory's lifecycle in a run: restore (layers, merges, promotion after a merge) and save."""

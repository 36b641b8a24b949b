"""The run's facts: its settings, its event and trust, its memory scope, its time budget.

Nothing here imports the run's steps above it."""

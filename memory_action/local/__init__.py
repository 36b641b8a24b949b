"""The ``memory-agent`` command's own pieces, outside the action's run: ``review`` (a pull request
or ``--local`` change reviewed from a terminal), ``git_diff`` and ``run_context`` (a local
checkout's ``git diff BASE...HEAD`` as a pull request), ``memory_cli`` (``memory list|show|diff|
blame``), ``memory_commands`` and ``history`` (``memory log|rollback|export|import``),
``local_store`` (the store those commands read), ``repository`` (which repository a local run
belongs to), ``words`` (settings named as flags and variables)."""

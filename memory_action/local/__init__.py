"""The ``memory-agent`` command's own pieces, outside the action's run: ``review`` (a pull request
or ``--local`` change reviewed from a terminal), ``diff`` and ``context`` (a local checkout's
``git diff BASE...HEAD`` as a pull request), ``memory_cli`` (``memory list|show|diff|blame``),
``memory_commands`` and ``history`` (``memory log|rollback|export|import``)."""

"""Runs that never call a model (an unhandled event, a comment command, maintenance with nothing
changed) must not pay for importing LangChain (about a second): the pipeline loads it only when it
builds an agent."""

from __future__ import annotations

import subprocess
import sys

PROBE = (
    "import sys, memory_action.main, memory_action.pipeline; "
    "print(sorted(m for m in ('langchain', 'langchain_core', 'langgraph') if m in sys.modules))"
)


def test_the_pipeline_imports_no_langchain_until_an_agent_runs() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr

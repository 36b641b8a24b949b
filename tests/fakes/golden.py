"""Golden files: rendered text compared with ``tests/fixtures/golden/<name>``.

After an intended change, rewrite them with ``UPDATE_GOLDEN=1 pytest ...`` and review the diff.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden"


def assert_golden(name: str, actual: str) -> None:
    """Compare with tests/fixtures/golden/<name>; UPDATE_GOLDEN=1 rewrites the file instead."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                fromfile=f"golden/{name}",
                tofile="rendered",
            )
        )
        pytest.fail(
            f"rendering differs from golden/{name} "
            f"(rerun with UPDATE_GOLDEN=1 if the change is intended):\n{diff}",
            pytrace=False,
        )

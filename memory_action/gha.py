"""GitHub Actions workflow commands, in one place.

Annotations, masks, outputs (heredoc with a random delimiter), the step summary and log groups.
Outside Actions (``GITHUB_ACTIONS`` unset) the same calls print plain, readable lines, so the local
CLI shares the code path.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from memory_action.safety.outgoing import Form, SafeText, gate


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


class Workflow:
    """Writes workflow commands for one run; ``env`` and ``out`` are injectable for tests."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ) -> None:
        """``err``: where annotations go outside Actions (default: stderr)."""
        self._env = os.environ if env is None else env
        self._out = out
        self._err = err
        self._masked: set[str] = set()

    @property
    def out(self) -> TextIO:
        return self._out if self._out is not None else sys.stdout

    @property
    def in_actions(self) -> bool:
        return self._env.get("GITHUB_ACTIONS") == "true"

    @property
    def masked_values(self) -> frozenset[str]:
        """Every value this run asked the runner to mask (the scrubbers use them too)."""
        return frozenset(self._masked)

    def _command(self, name: str, message: str, title: str | None = None) -> None:
        message = self.redact(message)
        if self.in_actions:
            props = f" title={_escape_property(self.redact(title))}" if title else ""
            print(f"::{name}{props}::{_escape_data(message)}", file=self.out, flush=True)
        else:
            label = {"error": "Error", "warning": "Warning", "notice": "Note"}.get(name, name)
            print(f"{label}: {message}", file=self._err or sys.stderr, flush=True)

    def error(self, message: str, title: str | None = None) -> None:
        self._command("error", message, title)

    def warning(self, message: str, title: str | None = None) -> None:
        self._command("warning", message, title)

    def notice(self, message: str, title: str | None = None) -> None:
        self._command("notice", message, title)

    def info(self, message: str) -> None:
        print(self.redact(message), file=self.out, flush=True)

    def debug(self, message: str) -> None:
        if self.in_actions:
            print(f"::debug::{_escape_data(self.redact(message))}", file=self.out, flush=True)

    def add_mask(self, value: str) -> None:
        """Mask a secret in the log; multi-line values are masked line by line."""
        for line in {value, *value.splitlines()}:
            part = line.strip()
            if len(part) < 4 or part in self._masked:
                continue
            self._masked.add(part)
            if self.in_actions:
                print(f"::add-mask::{_escape_data(part)}", file=self.out, flush=True)

    def redact(self, text: str) -> str:
        """``text`` as the log may show it (also outside Actions): masked values as the runner
        shows them (``***``), then every other secret the outgoing gate finds, since a log
        line can carry what a model, a comment or memory wrote, and the runner masks only the
        values it was told."""
        return gate(self._mask(text), self._masked, form=Form.TEXT).text

    def _mask(self, text: str) -> str:
        for value in sorted(self._masked, key=len, reverse=True):
            text = text.replace(value, "***")
        return text

    def set_output(self, name: str, value: SafeText) -> None:
        """Write a step output; only a text that passed the outgoing gate (``outgoing.gate``)."""
        path = self._env.get("GITHUB_OUTPUT")
        if not path:
            return
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
        with Path(path).open("a", encoding="utf-8") as handle:
            handle.write(f"{name}<<{delimiter}\n{value.text}\n{delimiter}\n")

    def append_summary(self, markdown: SafeText) -> bool:
        """Append to the job summary (only a text that passed the outgoing gate); False when
        there is none (outside Actions)."""
        path = self._env.get("GITHUB_STEP_SUMMARY")
        if not path:
            return False
        with Path(path).open("a", encoding="utf-8") as handle:
            handle.write(self._mask(markdown.text).rstrip("\n") + "\n")  # gated already
        return True

    @contextmanager
    def group(self, title: str) -> Iterator[None]:
        if self.in_actions:
            print(f"::group::{_escape_data(self.redact(title))}", file=self.out, flush=True)
        try:
            yield
        finally:
            if self.in_actions:
                print("::endgroup::", file=self.out, flush=True)

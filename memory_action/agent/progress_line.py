"""A run's model requests as they happen, on a stream: the engine's ``RequestProgress`` rendered.

On a terminal one live line is redrawn in place (``\\r``, erase to the end of the line): request
k of n, what it is for, how many files, its size, the tokens so far and the time since the run
began, ticking while the model thinks. Anywhere else (a CI log, a file, the action's log) each
request is one plain line as it is sent, so a log that stops shows what it waits for. Other
output written while the live line is up goes through ``guard``, which clears the line first.

The clock is injected: tests drive the time, nothing here waits on the wall clock.
"""

from __future__ import annotations

import io
import shutil
import threading
import time
from collections.abc import Callable, Mapping
from typing import TextIO, cast

from memory_action.agent.progress import SENT, RequestProgress

TICK_S = 1.0  # how often the live line's clock moves while a request is out
_CLEAR = "\r\x1b[K"  # back to the line's start, erase to its end


def is_live_terminal(stream: TextIO, env: Mapping[str, str]) -> bool:
    """A terminal that can redraw a line (not a pipe, a file or a dumb terminal)."""
    term = env.get("TERM", "")
    try:
        return stream.isatty() and term != "dumb"
    except ValueError:  # a closed stream
        return False


def elapsed_text(seconds: float) -> str:
    minutes, rest = divmod(max(0, int(seconds)), 60)
    return f"{minutes}:{rest:02d}"


def describe(event: RequestProgress, elapsed_s: float) -> str:
    """One request in one line, the same words live and plain."""
    files = f"{event.files} file{'s' if event.files != 1 else ''}" if event.files else ""
    parts = [
        f"Model request {event.request} of {event.planned}",
        event.part,
        *([files] if files else []),
        f"~{event.estimated_tokens:,} tokens",
        f"{event.tokens_in:,} in, {event.tokens_out:,} out so far",
        elapsed_text(elapsed_s),
    ]
    return " · ".join(parts)


class ProgressLine:
    """The ``ProgressHook`` of a run that shows its requests on ``out``."""

    def __init__(
        self,
        out: TextIO,
        *,
        live: bool,
        clock: Callable[[], float] = time.monotonic,
        width: Callable[[], int] = lambda: shutil.get_terminal_size().columns,
    ) -> None:
        self.out = out
        self.live = live
        self._clock = clock
        self._width = width
        self._started = clock()
        self._last: RequestProgress | None = None
        self._drawn = False
        self._lock = threading.RLock()

    def __call__(self, event: RequestProgress) -> None:
        with self._lock:
            self._last = event
            try:
                if self.live:
                    self._draw()
                elif event.stage == SENT:
                    self.out.write(describe(event, self._clock() - self._started) + "\n")
                    self.out.flush()
            except (OSError, ValueError):  # a closed pipe or stream: showing progress never
                self.live, self._last = False, None  # fails the run; it just stops
                self.out = _Discard()

    def tick(self) -> None:
        """Move the live line's clock while a request waits for its answer."""
        with self._lock:
            if self.live and self._last is not None and self._last.stage == SENT:
                self._draw()

    def clear(self) -> None:
        """Take the live line away, so the next text starts on a clean line."""
        with self._lock:
            if self._drawn:
                self.out.write(_CLEAR)
                self.out.flush()
                self._drawn = False

    def guard(self, stream: TextIO) -> TextIO:
        """``stream``, clearing the live line before anything else is written to it."""
        # A TextIOBase is a text stream; typing's TextIO protocol is only stricter on paper.
        return cast("TextIO", _Guarded(stream, self.clear))

    def start_ticking(self, interval_s: float = TICK_S) -> Callable[[], None]:
        """Tick every ``interval_s`` in a daemon thread; returns what stops it."""
        stop = threading.Event()

        def run() -> None:
            while not stop.wait(interval_s):
                self.tick()

        threading.Thread(target=run, name="progress-line", daemon=True).start()
        return stop.set

    def _draw(self) -> None:
        if self._last is None:
            return
        text = describe(self._last, self._clock() - self._started)
        if self._last.stage == SENT:
            text += " · waiting for the model"
        limit = max(20, self._width() - 1)  # a wrapped line could not be redrawn in place
        if len(text) > limit:
            text = text[: limit - 1] + "…"
        self.out.write(_CLEAR + text)
        self.out.flush()
        self._drawn = True


class _Guarded(io.TextIOBase):
    """A text stream that runs ``before`` ahead of every write."""

    def __init__(self, target: TextIO, before: Callable[[], None]) -> None:
        super().__init__()
        self._target = target
        self._before = before

    def write(self, text: str) -> int:
        if text:
            self._before()
        return self._target.write(text)

    def flush(self) -> None:
        self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()


class _Discard(io.StringIO):
    """Where progress goes once its stream is gone."""

    def write(self, text: str) -> int:
        return len(text)

"""``ProgressLine``: a live line redrawn in place on a terminal, one plain line per request
elsewhere. The clock is the test's: time moves only when the test says so."""

from __future__ import annotations

import io

from memory_action.agent.progress import ANSWERED, SENT, RequestProgress, Stage
from memory_action.agent.progress_line import ProgressLine, is_live_terminal

CLEAR = "\r\x1b[K"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def event(stage: Stage, request: int, *, files: int = 4, tokens_in: int = 0) -> RequestProgress:
    return RequestProgress(
        stage=stage,
        request=request,
        planned=3,
        part=f"batch {request} of 2",
        files=files,
        estimated_tokens=3_100,
        tokens_in=tokens_in,
        tokens_out=tokens_in // 10,
    )


def test_plain_output_is_one_line_per_request_as_it_is_sent() -> None:
    out, clock = io.StringIO(), Clock()
    line = ProgressLine(out, live=False, clock=clock)

    line(event(SENT, 1))
    clock.now += 12
    line(event(ANSWERED, 1, tokens_in=3_000))
    line(event(SENT, 2, files=1, tokens_in=3_000))
    clock.now += 65
    line.tick()  # no live line: nothing to redraw
    line.clear()

    assert out.getvalue().splitlines() == [
        "Model request 1 of 3 · batch 1 of 2 · 4 files · ~3,100 tokens · 0 in, 0 out so far · 0:00",
        "Model request 2 of 3 · batch 2 of 2 · 1 file · ~3,100 tokens · 3,000 in, 300 out so far "
        "· 0:12",
    ]
    assert "\r" not in out.getvalue()


def test_the_live_line_is_redrawn_in_place_and_its_clock_ticks_while_waiting() -> None:
    out, clock = io.StringIO(), Clock()
    line = ProgressLine(out, live=True, clock=clock, width=lambda: 200)

    line(event(SENT, 1))
    clock.now += 75
    line.tick()

    first, second = out.getvalue().split(CLEAR)[1:]
    assert first.endswith("· 0:00 · waiting for the model")
    assert second.endswith("· 1:15 · waiting for the model")
    assert "\n" not in out.getvalue()
    line(event(ANSWERED, 1, tokens_in=3_000))
    clock.now += 5
    before = out.getvalue()
    line.tick()  # answered: nothing is waiting, the line stays as it is
    assert out.getvalue() == before
    assert before.split(CLEAR)[-1].endswith("3,000 in, 300 out so far · 1:15")


def test_other_output_clears_the_live_line_first_and_the_end_leaves_no_trace() -> None:
    out, clock = io.StringIO(), Clock()
    line = ProgressLine(out, live=True, clock=clock, width=lambda: 200)
    guarded = line.guard(out)

    line(event(SENT, 1))
    print("Warning: the provider asked to wait 2 s", file=guarded)
    line(event(ANSWERED, 1))
    line.clear()

    text = out.getvalue()
    warning_at = text.index("Warning:")
    assert text[:warning_at].endswith(CLEAR)  # the live line was taken away first
    assert text.endswith(CLEAR)


def test_the_live_line_never_wraps() -> None:
    out = io.StringIO()
    line = ProgressLine(out, live=True, clock=Clock(), width=lambda: 40)

    line(event(SENT, 1))

    drawn = out.getvalue().split(CLEAR)[-1]
    assert len(drawn) == 39 and drawn.endswith("…")


def test_only_a_real_terminal_gets_the_live_line() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert is_live_terminal(Terminal(), {"TERM": "xterm-256color"})
    assert not is_live_terminal(Terminal(), {"TERM": "dumb"})
    assert not is_live_terminal(io.StringIO(), {"TERM": "xterm"})


def test_a_closed_stream_stops_the_progress_not_the_run() -> None:
    out = io.StringIO()
    line = ProgressLine(out, live=False, clock=Clock())
    out.close()

    line(event(SENT, 1))  # no exception: the review goes on without its progress
    line(event(SENT, 2))
    line.clear()

"""Pack the files of a review into requests that each fit a token capacity.

Files keep their order (most valuable first) and go first-fit into the batches opened so far,
with as much diff context as fits. A file too large for a whole request is split between hunks,
a hunk too large for one is split between lines, and only a single line longer than a whole
request is cut. What needs more requests than the budget allows is listed, never dropped; its
reason quotes the run's ``max_model_calls`` as the user set it, not the batches that budget left.
A file partly shown is listed with what was not shown (the comment says it was reviewed in part).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from memory_action.github.pull_request import ChangedFile
from memory_action.review.patch import Hunk, compress_hunks, parse_patch, render_hunks
from memory_action.review.selection import ReviewFile, Skipped

OVER_BUDGET = "over max_model_calls ({max_model_calls})"
TOO_LARGE = "too large for one request to this model (room for {capacity:,} tokens of diff)"
_PART_SUFFIX = " (part {part} of {parts})"
_WIDEST_PART_SUFFIX = _PART_SUFFIX.format(part=9999, parts=9999)


@dataclass(frozen=True, kw_only=True)
class FilePart:
    path: str
    text: str
    tokens: int
    part: int = 1
    parts: int = 1  # a large file is split by hunks over several batches
    cut: str = ""  # non-empty when lines were not shown (says which)
    whole: bool = False  # the file's whole patch as GitHub gives it: asking for it adds nothing


@dataclass(frozen=True, kw_only=True)
class Batch:
    parts: tuple[FilePart, ...]
    tokens: int

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(part.path for part in self.parts))

    @property
    def whole(self) -> frozenset[str]:
        """The files whose whole patch this batch shows."""
        return frozenset(part.path for part in self.parts if part.whole)


@dataclass(frozen=True, kw_only=True)
class ReviewPlan:
    batches: tuple[Batch, ...]
    not_reviewed: tuple[Skipped, ...]  # over the call budget, or could not fit at all
    complete: bool = True  # every file has all its parts in the batches (a line may be cut)

    @property
    def reviewed_paths(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(path for batch in self.batches for path in batch.paths))


def file_header(file: ChangedFile) -> str:
    """``### <status> <path> (+a -d)[ (renamed from X)]``: how every file starts in a request."""
    renamed = f" ({file.status} from {file.previous_path})" if file.previous_path else ""
    return f"### {file.status} {file.path} (+{file.additions} -{file.deletions}){renamed}"


def render_file(rf: ReviewFile, *, context: int) -> str:
    """The file's header line and its diff with at most ``context`` unchanged lines per change."""
    return f"{file_header(rf.file)}\n" + "".join(_text(unit) for unit in _units(rf.file, context))


def shows_whole_patch(file: ChangedFile, context: int) -> bool:
    """Rendered with ``context``, the file's diff is its whole patch (nothing compressed)."""
    if not file.patch:
        return False
    try:
        hunks = parse_patch(file.patch)
    except ValueError:
        return False
    return compress_hunks(hunks, context=context) == hunks and render_hunks(hunks) == "".join(
        hunk.render() for hunk in hunks
    )


def plan_batches(
    files: Sequence[ReviewFile],
    *,
    capacity: int,
    count: Callable[[str], int],
    max_batches: int,
    max_model_calls: int | None = None,
    contexts: Sequence[int] = (3, 1, 0),
) -> ReviewPlan:
    """Batches of at most ``capacity`` tokens each (as ``count`` measures), at most ``max_batches``;
    ``max_model_calls`` (the run's setting, ``max_batches`` when not given) is what the reasons
    of files left out for want of requests quote.

    Each file tries the larger context first. When the plan needs more batches than allowed,
    the whole plan is made again preferring less context, and the first plan that fits (or else
    the one that reviews most) is kept.
    """
    if capacity < 1 or max_batches < 0 or not contexts or min(contexts) < 0:
        raise ValueError(
            f"cannot plan batches with capacity={capacity}, max_batches={max_batches}, "
            f"contexts={tuple(contexts)}: capacity must be positive, the others not negative"
        )
    plans: list[_Planner] = []
    for level in range(len(contexts)):
        planner = _Planner(
            capacity=capacity,
            count=count,
            max_batches=max_batches,
            max_model_calls=max_batches if max_model_calls is None else max_model_calls,
        )
        for rf in files:
            planner.add(rf, contexts[level:])
        if not planner.over_budget:
            return planner.plan()
        plans.append(planner)
    return max(plans, key=lambda planner: planner.reviewed).plan()


# A piece of a file's diff: a hunk, or a one-line description / unparsed patch.
_Unit = Hunk | str


def _units(file: ChangedFile, context: int) -> list[_Unit]:
    if file.status == "removed":
        return [f"deleted: {file.deletions} lines\n"]
    if not file.patch:
        if file.additions or file.deletions:
            return ["no diff from GitHub (binary or too large)\n"]
        if file.previous_path:
            return [f"{file.status}, content unchanged\n"]
        return ["no text changes (binary, empty or mode-only change)\n"]
    try:
        hunks = parse_patch(file.patch)
    except ValueError:
        return [file.patch if file.patch.endswith("\n") else file.patch + "\n"]
    compressed: list[_Unit] = list(compress_hunks(hunks, context=context))
    return compressed or ["no text changes\n"]


def _text(unit: _Unit) -> str:
    return unit if isinstance(unit, str) else render_hunks([unit])


@dataclass(kw_only=True)
class _Piece:
    """Diff text of one part of a file, and what of it was cut to fit."""

    text: str
    cut: str = ""


@dataclass(kw_only=True)
class _Planner:
    capacity: int
    count: Callable[[str], int]
    max_batches: int
    max_model_calls: int
    batches: list[list[FilePart]] = field(default_factory=list)
    used: list[int] = field(default_factory=list)
    not_reviewed: list[Skipped] = field(default_factory=list)
    over_budget: bool = False
    complete: bool = True
    files_reviewed: int = 0
    parts_placed: int = 0

    @property
    def reviewed(self) -> tuple[int, int]:
        return self.files_reviewed, self.parts_placed

    def plan(self) -> ReviewPlan:
        batches = tuple(
            Batch(parts=tuple(parts), tokens=used)
            for parts, used in zip(self.batches, self.used, strict=True)
        )
        return ReviewPlan(
            batches=batches, not_reviewed=tuple(self.not_reviewed), complete=self.complete
        )

    def add(self, rf: ReviewFile, contexts: Sequence[int]) -> None:
        fits_a_request = False
        for context in contexts:
            text = render_file(rf, context=context)
            whole = shows_whole_patch(rf.file, context)
            part = FilePart(path=rf.file.path, text=text, tokens=self.count(text), whole=whole)
            fits_a_request = fits_a_request or part.tokens <= self.capacity
            if self._place(part):
                self.files_reviewed += 1
                return
        if fits_a_request:
            self._over_budget(rf.file.path)
        else:
            self._add_split(rf.file, contexts[0])

    def _add_split(self, file: ChangedFile, context: int) -> None:
        header = file_header(file)
        pieces = self._pieces(header, _units(file, context))
        if pieces is None:
            self.complete = False
            self.not_reviewed.append(
                Skipped(path=file.path, reason=TOO_LARGE.format(capacity=self.capacity))
            )
            return
        missing: list[int] = []
        cuts: list[str] = []
        for number, piece in enumerate(pieces, start=1):
            suffix = _PART_SUFFIX.format(part=number, parts=len(pieces)) if len(pieces) > 1 else ""
            text = f"{header}{suffix}\n{piece.text}"
            part = FilePart(
                path=file.path,
                text=text,
                tokens=self.count(text),
                part=number,
                parts=len(pieces),
                cut=piece.cut,
            )
            if not self._place(part):
                missing.append(number)
            elif piece.cut:
                cuts.append(piece.cut)
        if len(missing) == len(pieces):
            self._over_budget(file.path)
            return
        self.files_reviewed += 1
        notes = list(cuts)
        if missing:
            numbers = _ranges(missing)
            label = "part" if len(missing) == 1 else "parts"
            over = OVER_BUDGET.format(max_model_calls=self.max_model_calls)
            notes.append(f"{label} {numbers} of {len(pieces)} {over}")
            self.over_budget, self.complete = True, False
        if notes:
            self.not_reviewed.append(Skipped(path=file.path, reason="; ".join(notes)))

    def _pieces(self, header: str, units: list[_Unit]) -> list[_Piece] | None:
        """The diff split into pieces that each fit a request with the header; None if none can."""

        def fits(body: str) -> bool:
            return self.count(f"{header}{_WIDEST_PART_SUFFIX}\n{body}") <= self.capacity

        small: list[_Piece] = []
        for unit in units:
            if fits(_text(unit)):
                small.append(_Piece(text=_text(unit)))
                continue
            pieces = _split_hunk(unit, fits) if isinstance(unit, Hunk) else [_cut_text(unit, fits)]
            if any(piece is None for piece in pieces):
                return None
            small += [piece for piece in pieces if piece is not None]
        packed: list[_Piece] = []
        for piece in small:
            if packed and fits(packed[-1].text + piece.text):
                cut = "; ".join(note for note in (packed[-1].cut, piece.cut) if note)
                packed[-1] = _Piece(text=packed[-1].text + piece.text, cut=cut)
            else:
                packed.append(piece)
        return packed

    def _place(self, part: FilePart) -> bool:
        """Put the part in the first batch with room, else in a new one; False if neither can."""
        if part.tokens > self.capacity:
            return False
        room = (i for i, used in enumerate(self.used) if used + part.tokens <= self.capacity)
        index = next(room, None)
        if index is None:
            if len(self.batches) >= self.max_batches:
                return False
            self.batches.append([])
            self.used.append(0)
            index = len(self.batches) - 1
        self.batches[index].append(part)
        self.used[index] += part.tokens
        self.parts_placed += 1
        return True

    def _over_budget(self, path: str) -> None:
        self.over_budget, self.complete = True, False
        self.not_reviewed.append(
            Skipped(path=path, reason=OVER_BUDGET.format(max_model_calls=self.max_model_calls))
        )


def _split_hunk(hunk: Hunk, fits: Callable[[str], bool]) -> list[_Piece | None]:
    """The hunk as consecutive smaller hunks that each fit (exact headers); a line that cannot
    fit alone is cut (None when not even its start fits)."""
    pieces: list[_Piece | None] = []
    start = 0
    while start < len(hunk.lines):
        stop = _longest_fitting(hunk, start, fits)
        if stop > start:
            pieces.append(_Piece(text=render_hunks([hunk.piece(start, stop)])))
        else:
            stop = _unit_end(hunk, start)
            pieces.append(_cut_line(hunk.piece(start, stop), fits))
        start = stop
    return pieces


def _longest_fitting(hunk: Hunk, start: int, fits: Callable[[str], bool]) -> int:
    """The largest ``stop`` so that lines ``[start:stop]`` fit as one hunk (``start`` if none)."""
    low, high = start, len(hunk.lines)
    while low < high:
        middle = (low + high + 1) // 2
        stop = _unit_end(hunk, middle - 1)  # never part a line from its "\ No newline" marker
        if fits(render_hunks([hunk.piece(start, stop)])):
            low = middle
        else:
            high = middle - 1
    return _unit_end(hunk, low - 1) if low > start else start


def _unit_end(hunk: Hunk, index: int) -> int:
    """The index after line ``index`` and the "\\ No newline" marker that may follow it."""
    end = index + 1
    while end < len(hunk.lines) and hunk.lines[end].startswith("\\"):
        end += 1
    return end


def _cut_line(piece: Hunk, fits: Callable[[str], bool]) -> _Piece | None:
    line = piece.lines[0]
    number = piece.old_start if line.startswith("-") else piece.new_start
    side = "old" if line.startswith("-") else "new"

    def shown(keep: int) -> str:
        return render_hunks([replace(piece, lines=(line[:keep] + " [cut]",))])

    keep = _longest_prefix(len(line), lambda keep: fits(shown(keep)), minimum=1)
    if keep is None:
        return None
    return _Piece(
        text=shown(keep),
        cut=f"{side} line {number} cut to {keep - 1} of {len(line) - 1} characters",
    )


def _cut_text(text: str, fits: Callable[[str], bool]) -> _Piece | None:
    def shown(keep: int) -> str:
        return f"{text[:keep]}\n[cut: {len(text) - keep} more characters]\n"

    keep = _longest_prefix(len(text), lambda keep: fits(shown(keep)), minimum=0)
    if keep is None:
        return None
    return _Piece(text=shown(keep), cut=f"patch cut after {keep} of {len(text)} characters")


def _longest_prefix(length: int, fits: Callable[[int], bool], *, minimum: int) -> int | None:
    """The largest ``keep`` in ``[minimum, length]`` with ``fits(keep)``, or None."""
    if not fits(minimum):
        return None
    low, high = minimum, length
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _ranges(numbers: Sequence[int]) -> str:
    """``[1, 2, 3, 5]`` as ``"1-3, 5"``."""
    runs: list[list[int]] = []
    for number in numbers:
        if runs and runs[-1][-1] == number - 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs)

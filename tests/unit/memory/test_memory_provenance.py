"""Provenance of memory entries: stamps, the sidecar file, blame and the summary table."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memory_action.memory.provenance import (
    FILENAME,
    MAX_ENTRY_CHARS,
    MAX_RECORDS,
    Provenance,
    Stamp,
    carry,
    changed_entries,
    entries,
    iso_utc,
    merge,
    render_blame,
    render_changes_markdown,
    stamp_for_run,
    update,
)
from memory_action.memory.trust import Trust
from memory_action.run.context import PullRequestRef, RunContext
from tests.fakes.golden import assert_golden

PR_RUN = Stamp(
    run_id="1234",
    run_attempt="1",
    event="pull_request",
    actor="mona",
    pr=7,
    trust="trusted",
    time="2026-11-29T08:15:00Z",
)
PUSH_RUN = Stamp(
    run_id="1300",
    run_attempt="2",
    event="push",
    actor="hubot",
    pr=None,
    trust="trusted",
    time="2026-11-30T09:00:00Z",
)
OLD_RUN = Stamp(
    run_id="900",
    run_attempt="1",
    event="schedule",
    actor="octocat",
    pr=None,
    trust="trusted",
    time="2026-10-01T00:00:00Z",
)

MEMORY = "# Memory\n\n## Tests\n- Use pytest fixtures, not setUp\n- Run ruff first\n"


def stamp_dict(**overrides: object) -> dict[str, object]:
    data = PR_RUN.to_json()
    data.update(overrides)
    return data


def write_sidecar(path: Path, entries_value: object, **extra: object) -> Path:
    path.write_text(json.dumps({"version": 1, "entries": entries_value, **extra}), "utf-8")
    return path


# --- stamps ------------------------------------------------------------------------------------


def test_stamp_round_trips_through_json() -> None:
    for stamp in (PR_RUN, PUSH_RUN):
        assert Stamp.from_json(json.loads(json.dumps(stamp.to_json()))) == stamp


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param({"actor": ""}, id="empty-actor"),
        pytest.param({"actor": "mona\nhubot"}, id="newline-in-actor"),
        pytest.param({"event": "x" * 201}, id="overlong-field"),
        pytest.param({"pr": 0}, id="pr-zero"),
        pytest.param({"pr": True}, id="pr-bool"),
        pytest.param({"time": "yesterday"}, id="time-not-iso"),
        pytest.param({"time": "2026-11-29T08:15:00+02:00"}, id="time-not-utc"),
    ],
)
def test_invalid_stamps_are_refused(overrides: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Stamp(**{**PR_RUN.to_json(), **overrides})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "data",
    [
        pytest.param([], id="not-an-object"),
        pytest.param(stamp_dict(pr="7"), id="pr-as-string"),
        pytest.param(stamp_dict(pr=7.0), id="pr-as-float"),
        pytest.param(stamp_dict(run_id=1234), id="run-id-as-number"),
        pytest.param(stamp_dict(extra="x"), id="unknown-field"),
        pytest.param({"run_id": "1"}, id="missing-fields"),
    ],
)
def test_stamp_from_json_refuses_malformed_data(data: object) -> None:
    with pytest.raises(ValueError):
        Stamp.from_json(data)


def test_describe() -> None:
    assert PR_RUN.describe() == "run 1234-1 pull_request @mona pr#7 trusted 2026-11-29"
    assert PUSH_RUN.describe() == "run 1300-2 push @hubot trusted 2026-11-30"


def test_iso_utc() -> None:
    assert iso_utc(0) == "1970-01-01T00:00:00Z"
    assert iso_utc(1_795_940_100.9) == "2026-11-29T08:15:00Z"


def make_context(
    pull_request: PullRequestRef | None, event: str, actor: str = "mona"
) -> RunContext:
    return RunContext(
        event_name=event,
        action="",
        repository="octo/repo",
        server_url="https://example.invalid",
        api_url="https://api.example.invalid",
        ref="refs/heads/main",
        sha="0" * 40,
        default_branch="main",
        run_id="1234",
        run_attempt="1",
        actor=actor,
        workspace=Path("workspace"),
        pull_request=pull_request,
        comment_body="",
        comment_author_association="",
        trust=Trust.TRUSTED,
        may_write=True,
        write_note="",
    )


def test_stamp_for_run() -> None:
    pr = PullRequestRef(
        number=7,
        head_repo="octo/repo",
        base_ref="main",
        head_ref="feature",
        head_sha="1" * 40,
        author="mona",
        author_association="MEMBER",
        is_fork=False,
    )

    assert stamp_for_run(make_context(pr, "pull_request"), 1_795_940_100) == PR_RUN
    assert stamp_for_run(make_context(None, "push"), 0).pr is None


@pytest.mark.parametrize("actor", ["", "a\nb", "x" * 500])
def test_stamp_for_run_never_raises_on_odd_context_fields(actor: str) -> None:
    assert stamp_for_run(make_context(None, "push", actor=actor), 0).actor == "unknown"


# --- update, carry, merge ----------------------------------------------------------------------


def test_entries_are_stripped_non_blank_lines_once() -> None:
    assert entries("# M\n\n  - a  \n- a\r\n\t\n- b") == ["# M", "- a", "- b"]


def test_update_stamps_new_and_changed_entries_and_keeps_the_rest() -> None:
    before = Provenance(
        records={"# Memory": OLD_RUN, "## Tests": OLD_RUN, "- Run ruff first": OLD_RUN}
    )
    after = MEMORY.replace("- Run ruff first", "- Run ruff before mypy") + "- New fact\n"

    prov = update(before, MEMORY, after, PUSH_RUN)

    assert prov.records == {
        "# Memory": OLD_RUN,
        "## Tests": OLD_RUN,
        "- Run ruff before mypy": PUSH_RUN,
        "- New fact": PUSH_RUN,
    }


def test_update_leaves_unchanged_unknown_entries_unknown_and_drops_deleted_ones() -> None:
    before = Provenance(records={"- gone": OLD_RUN, "- stale record of nothing": OLD_RUN})

    prov = update(before, "- kept\n- gone\n", "- kept\n  - indented now\n", PUSH_RUN)

    assert prov.records == {"- indented now": PUSH_RUN}


def test_update_of_identical_text_changes_nothing() -> None:
    prov = Provenance(records={"# Memory": OLD_RUN})

    assert update(prov, MEMORY, MEMORY, PUSH_RUN) == prov


def test_update_does_not_mutate_its_input() -> None:
    prov = Provenance(records={"- a": OLD_RUN})

    update(prov, "- a\n", "- b\n", PUSH_RUN)

    assert prov.records == {"- a": OLD_RUN}


def test_carry_keeps_the_original_pr_stamps_on_promotion() -> None:
    promoted = update(Provenance(records={}), "- a\n", "- a\n- from the pr\n- other\n", PUSH_RUN)

    prov = carry(promoted, {"  - from the pr ": PR_RUN, "- not in memory": PR_RUN})

    assert prov.records == {"- from the pr": PR_RUN, "- other": PUSH_RUN}


def test_merge_is_a_union_where_the_older_stamp_wins() -> None:
    a = Provenance(records={"- shared": PUSH_RUN, "- only a": PUSH_RUN})
    b = Provenance(records={"- shared": OLD_RUN, "- only b": PR_RUN})

    merged = merge(a, b)

    assert merged.records == {"- shared": OLD_RUN, "- only a": PUSH_RUN, "- only b": PR_RUN}
    assert merge(b, a) == merged


def test_merge_tie_keeps_the_first() -> None:
    twin = Stamp(
        run_id="1",
        run_attempt="1",
        event="push",
        actor="other",
        pr=None,
        trust="trusted",
        time=PR_RUN.time,
    )

    assert (
        merge(Provenance(records={"- x": PR_RUN}), Provenance(records={"- x": twin})).records["- x"]
        == PR_RUN
    )


# --- the sidecar file --------------------------------------------------------------------------


def test_dump_and_load_round_trip(tmp_path: Path) -> None:
    prov = Provenance(records={"- b": PUSH_RUN, "- a | with `ticks`": PR_RUN, "# Memory": OLD_RUN})
    path = tmp_path / FILENAME

    prov.dump(path)

    assert Provenance.load(path) == prov
    assert list(json.loads(path.read_text("utf-8"))["entries"]) == [
        "# Memory",
        "- a | with `ticks`",
        "- b",
    ]


def test_dump_is_stable_and_leaves_no_temporary_files(tmp_path: Path) -> None:
    path = tmp_path / "memory" / FILENAME
    Provenance(records={"- b": PUSH_RUN, "- a": PR_RUN}).dump(path)
    first = path.read_bytes()

    Provenance(records={"- a": PR_RUN, "- b": PUSH_RUN}).dump(path)

    assert path.read_bytes() == first
    assert first.endswith(b"}\n")
    assert [child.name for child in path.parent.iterdir()] == [FILENAME]
    assert path.stat().st_mode & 0o777 == 0o644


def test_dump_replaces_a_planted_symlink_not_its_target(tmp_path: Path) -> None:
    target = tmp_path / "target.txt"
    target.write_text("keep me", "utf-8")
    path = tmp_path / FILENAME
    path.symlink_to(target)

    Provenance(records={"- a": PR_RUN}).dump(path)

    assert target.read_text("utf-8") == "keep me"
    assert not path.is_symlink()
    assert Provenance.load(path).records == {"- a": PR_RUN}


def test_missing_file_is_empty(tmp_path: Path) -> None:
    assert Provenance.load(tmp_path / FILENAME) == Provenance(records={})
    assert Provenance.load(tmp_path / "no" / "such" / FILENAME) == Provenance(records={})


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"{not json", id="not-json"),
        pytest.param(b"\xff\xfe{}", id="not-utf8"),
        pytest.param(b"[]", id="array"),
        pytest.param(b'"entries"', id="string"),
        pytest.param(b"null", id="null"),
        pytest.param(b'{"entries": []}', id="entries-not-an-object"),
        pytest.param(b'{"version": 1}', id="no-entries"),
        pytest.param(b"[" * 100_000 + b"]" * 100_000, id="deeply-nested"),
        pytest.param(b'{"entries": {"- a": ' + b"[" * 50_000 + b"]" * 50_000 + b"}}", id="nested"),
        pytest.param(b"NaN", id="nan"),
    ],
)
def test_malformed_files_load_as_empty(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / FILENAME
    path.write_bytes(content)

    assert Provenance.load(path) == Provenance(records={})


def test_invalid_records_are_skipped_one_by_one(tmp_path: Path) -> None:
    path = write_sidecar(
        tmp_path / FILENAME,
        {
            "- good": PR_RUN.to_json(),
            "- pr as string": stamp_dict(pr="7"),
            "- control chars": stamp_dict(actor="mona\x1b[31m"),
            "- not a stamp": "run 1",
            "- bad time": stamp_dict(time="soon"),
            "- multi\nline": PR_RUN.to_json(),
            "  - not stripped": PR_RUN.to_json(),
            "": PR_RUN.to_json(),
            "x" * (MAX_ENTRY_CHARS + 1): PR_RUN.to_json(),
            "- long field": stamp_dict(trust="t" * 10_000),
        },
    )

    assert Provenance.load(path).records == {"- good": PR_RUN}


def test_record_count_is_capped(tmp_path: Path) -> None:
    stamp = PR_RUN.to_json()
    path = write_sidecar(tmp_path / FILENAME, {f"- fact {n}": stamp for n in range(6_000)})

    assert len(Provenance.load(path).records) == MAX_RECORDS


def test_oversized_file_is_not_parsed(tmp_path: Path) -> None:
    path = write_sidecar(tmp_path / FILENAME, {"- a": PR_RUN.to_json()}, padding="x" * 9_000_000)

    assert Provenance.load(path) == Provenance(records={})


@pytest.mark.parametrize("kind", ["symlink", "directory", "fifo"])
def test_special_files_load_as_empty(tmp_path: Path, kind: str) -> None:
    path = tmp_path / FILENAME
    if kind == "symlink":
        real = write_sidecar(tmp_path / "elsewhere.json", {"- a": PR_RUN.to_json()})
        path.symlink_to(real)
    elif kind == "directory":
        path.mkdir()
    else:
        os.mkfifo(path)

    assert Provenance.load(path) == Provenance(records={})


# --- blame and the job summary -----------------------------------------------------------------


def blame_example() -> tuple[str, Provenance]:
    text = MEMORY + "\n## Style\n- Docstrings | say why, `not what`\n"
    prov = Provenance(
        records={
            "# Memory": OLD_RUN,
            "## Tests": OLD_RUN,
            "- Use pytest fixtures, not setUp": PR_RUN,
            "- Docstrings | say why, `not what`": PUSH_RUN,
        }
    )
    return text, prov


def test_blame_golden() -> None:
    text, prov = blame_example()

    assert_golden("memory_blame.txt", render_blame(text, prov))


def test_blame_keeps_every_line_in_order() -> None:
    text, prov = blame_example()

    rendered = render_blame(text, prov).splitlines()

    assert [line.partition(" | ")[2] for line in rendered] == text.splitlines()
    assert len({line.index("|") for line in rendered}) == 1  # one column for the bar


def test_blame_of_an_unknown_only_and_an_empty_text() -> None:
    assert render_blame("- a", Provenance(records={})) == "(unknown) | - a\n"
    assert (
        render_blame("- a\r\n", Provenance(records={"- a": PUSH_RUN}))
        == f"{PUSH_RUN.describe()} | - a\n"
    )
    assert render_blame("", Provenance(records={})) == ""


def test_changed_entries_with_their_provenance() -> None:
    before = MEMORY
    after = MEMORY.replace("- Run ruff first", "- Run ruff before mypy") + "- Untracked\n"
    prov = Provenance(records={"- Run ruff before mypy": PUSH_RUN, "# Memory": OLD_RUN})

    assert changed_entries(before, after, prov) == [
        ("- Run ruff before mypy", PUSH_RUN),
        ("- Untracked", None),
    ]
    assert changed_entries(MEMORY, MEMORY, prov) == []


def test_changes_table_golden() -> None:
    changed = [
        ("- Use pytest fixtures, not setUp", PR_RUN),
        ("- Docstrings | say why, `not what`", PUSH_RUN),
        ("- <img src=x> and a back\\slash", None),
    ]

    assert_golden("memory_changes.md", render_changes_markdown(changed))


def test_changes_table_of_nothing_is_empty() -> None:
    assert render_changes_markdown([]) == ""


def test_changes_table_cells_cannot_break_the_table() -> None:
    table = render_changes_markdown([("a|b`c", None)])

    row = table.splitlines()[2]
    assert row == "| a\\|b\\`c | (unknown) |"

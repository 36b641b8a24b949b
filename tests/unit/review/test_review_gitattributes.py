"""``.gitattributes`` patterns and Linguist's generated/vendored marks, as git reads them."""

from __future__ import annotations

import pytest

from memory_action.review.gitattributes import (
    generated_or_vendored,
    matches,
    matches_path_or_folder,
)

GENERATED = "generated (.gitattributes linguist-generated)"
VENDORED = "vendored (.gitattributes linguist-vendored)"


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        # Without "/", the pattern matches the file name at any depth.
        ("*.pb.go", "api/v1/service.pb.go", True),
        ("*.pb.go", "service.pb.go", True),
        ("schema.json", "a/b/schema.json", True),
        ("schema.json", "a/b/schema.json.bak", False),
        # "*" and "?" stop at "/".
        ("src/*.py", "src/app.py", True),
        ("src/*.py", "src/sub/app.py", False),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        # A "/" at the start or in the middle anchors the pattern at the root.
        ("/build.py", "build.py", True),
        ("/build.py", "tools/build.py", False),
        ("gen/out.py", "gen/out.py", True),
        ("gen/out.py", "pkg/gen/out.py", False),
        # "**" spans folders only as a whole segment.
        ("**/gen/*.py", "gen/a.py", True),
        ("**/gen/*.py", "x/y/gen/a.py", True),
        ("assets/**", "assets/js/app.js", True),
        ("assets/**", "assets", False),
        ("a/**/z.txt", "a/z.txt", True),
        ("a/**/z.txt", "a/b/c/z.txt", True),
        ("a**b.txt", "a/x/b.txt", False),
        ("a**b.txt", "axxb.txt", True),
        # A folder pattern does not reach the files inside it.
        ("vendor", "vendor/lib.js", False),
        ("vendor/", "vendor/lib.js", False),
        ("vendor/", "vendor", False),
        # Character classes, escapes, and literal dots.
        ("*.[ch]", "main.c", True),
        ("*.[ch]", "main.o", False),
        ("*.[!ch]", "main.o", True),
        ("*.[!ch]", "main.h", False),
        ("\\*.txt", "*.txt", True),
        ("\\*.txt", "a.txt", False),
        ("*.min.js", "appxminxjs", False),
        ("[abc", "[abc", True),
    ],
)
def test_pattern_rules(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


@pytest.mark.parametrize(
    ("attributes", "path", "expected"),
    [
        ("*.pb.go linguist-generated", "api/x.pb.go", GENERATED),
        ("*.pb.go linguist-generated=true", "api/x.pb.go", GENERATED),
        ("third_party/** linguist-vendored", "third_party/lib/a.c", VENDORED),
        ("/dist/** -diff linguist-vendored text", "dist/app.js", VENDORED),
        ("# *.py linguist-generated\n", "a.py", None),
        ("*.py\tlinguist-generated", "a.py", GENERATED),
        # Unset, false and unspecified undo an earlier line; the last matching line wins.
        ("gen/** linguist-generated\ngen/keep.py -linguist-generated", "gen/keep.py", None),
        ("gen/** linguist-generated\ngen/keep.py linguist-generated=false", "gen/keep.py", None),
        ("gen/** linguist-generated\ngen/keep.py !linguist-generated", "gen/keep.py", None),
        ("gen/** linguist-generated\ngen/keep.py -linguist-generated", "gen/other.py", GENERATED),
        ("a.py -linguist-generated\n*.py linguist-generated", "a.py", GENERATED),
        # Each attribute is decided on its own; other attributes on the line do not matter.
        ("x/** linguist-vendored\nx/a.py -linguist-generated", "x/a.py", VENDORED),
        ("x.py linguist-generated linguist-vendored", "x.py", GENERATED),
        ("x.py linguist-language=Python", "x.py", None),
        # Lines git ignores in attributes files: macros and negative patterns.
        ("[attr]gen linguist-generated", "agen", None),
        ("!x.py linguist-generated", "!x.py", None),
        ("", "a.py", None),
    ],
)
def test_generated_or_vendored(attributes: str, path: str, expected: str | None) -> None:
    assert generated_or_vendored(attributes, path) == expected


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("docs", "docs/index.md", True),
        ("docs/", "docs/index.md", True),
        ("docs/", "docs", False),  # a trailing "/" is for folders only
        ("docs/**", "docs/api/index.md", True),
        ("docs", "src/docs/notes.md", True),
        ("/docs", "src/docs/notes.md", False),
        ("*.snap", "tests/__snapshots__/a.snap", True),
        ("tests/fixtures", "tests/fixtures/x/y.json", True),
        ("tests/fixtures", "tests/test_fixtures.py", False),
    ],
)
def test_exclude_patterns_also_match_folders(pattern: str, path: str, expected: bool) -> None:
    assert matches_path_or_folder(pattern, path) is expected

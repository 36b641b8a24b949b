"""Which files a review reads, in which order, and the reason shown for each one it skips."""

from __future__ import annotations

import pytest

from memory_action.github.pull_request import ChangedFile
from memory_action.review.selection import (
    NO_DIFF,
    NO_PATCH,
    Category,
    ReviewFile,
    Skipped,
    categorise,
    select_files,
    skip_reason,
)


def changed(
    path: str,
    additions: int = 1,
    deletions: int = 0,
    *,
    status: str = "modified",
    patch: str | None = "@@",
) -> ChangedFile:
    return ChangedFile(
        path=path, status=status, additions=additions, deletions=deletions, patch=patch
    )


@pytest.mark.parametrize(
    ("path", "category"),
    [
        ("src/click/core.py", Category.SOURCE),
        ("app/main.go", Category.SOURCE),
        ("lib/index.ts", Category.SOURCE),
        ("examples/repo/repo.py", Category.SOURCE),
        ("tests/test_basic.py", Category.TEST),
        ("tests/fixtures/data.json", Category.TEST),
        ("src/pkg/test/helpers.py", Category.TEST),
        ("test_cli.py", Category.TEST),
        ("pkg/conftest.py", Category.TEST),
        ("pkg/server_test.go", Category.TEST),
        ("web/app.test.ts", Category.TEST),
        ("web/button.spec.jsx", Category.TEST),
        ("src/main/java/FooTest.java", Category.TEST),
        ("docs/index.rst", Category.DOCS),
        ("docs/conf.py", Category.DOCS),
        ("README.md", Category.DOCS),
        ("src/pkg/NOTES.md", Category.DOCS),
        ("CHANGES", Category.DOCS),
        ("CHANGES.rst", Category.DOCS),
        ("LICENSE", Category.DOCS),
        ("pyproject.toml", Category.CONFIG),
        ("setup.cfg", Category.CONFIG),
        ("tox.ini", Category.CONFIG),
        ("requirements-dev.txt", Category.CONFIG),
        ("docs/requirements.txt", Category.CONFIG),
        (".github/workflows/tests.yml", Category.CONFIG),
        (".github/ISSUE_TEMPLATE/bug.md", Category.CONFIG),
        ("Dockerfile", Category.CONFIG),
        ("docker/Dockerfile.dev", Category.CONFIG),
        ("Makefile", Category.CONFIG),
        (".pre-commit-config.yaml", Category.CONFIG),
        ("MANIFEST.in", Category.CONFIG),
        ("package.json", Category.CONFIG),
    ],
)
def test_categorise(path: str, category: Category) -> None:
    assert categorise(path) is category


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("package-lock.json", "lock file"),
        ("web/yarn.lock", "lock file"),
        ("pnpm-lock.yaml", "lock file"),
        ("poetry.lock", "lock file"),
        ("uv.lock", "lock file"),
        ("Pipfile.lock", "lock file"),
        ("Cargo.lock", "lock file"),
        ("go.sum", "lock file"),
        ("composer.lock", "lock file"),
        ("Gemfile.lock", "lock file"),
        ("static/app.min.js", "minified"),
        ("static/site.min.css", "minified"),
        ("static/app.js.map", "source map"),
        ("proto/api_pb2.py", "generated (protobuf)"),
        ("api/v1/api.pb.go", "generated (protobuf)"),
        ("vendor/github.com/x/y.go", "vendored (vendor/)"),
        ("web/node_modules/left-pad/index.js", "dependencies (node_modules/)"),
        ("third_party/zlib/zlib.h", "vendored (third_party/)"),
        ("dist/bundle.js", "build output (dist/)"),
        ("src/app.py", None),
        ("src/vendors.py", None),  # a name like a folder is not that folder
        ("docs/source-maps.md", None),
    ],
)
def test_well_known_names_and_folders(path: str, reason: str | None) -> None:
    assert skip_reason(changed(path), attributes="", exclude=()) == reason


def test_reasons_are_checked_in_order() -> None:
    lock_without_patch = changed("gen/package-lock.json", 500, 20, patch=None)
    attributes = "gen/** linguist-generated"
    assert (
        skip_reason(lock_without_patch, attributes=attributes, exclude=("docs/**", "gen/"))
        == "excluded by the exclude input (gen/)"
    )
    assert (
        skip_reason(lock_without_patch, attributes=attributes, exclude=())
        == "generated (.gitattributes linguist-generated)"
    )
    assert skip_reason(lock_without_patch, attributes="", exclude=()) == "lock file"
    assert (
        skip_reason(changed("big.py", 9000, 0, patch=None), attributes="", exclude=()) == NO_PATCH
    )
    # Binary (GitHub counts no lines), empty, or a mode change: nothing to read, and said so.
    assert skip_reason(changed("logo.png", 0, 0, patch=None), attributes="", exclude=()) == NO_DIFF


@pytest.mark.parametrize(
    "file",
    [
        changed("gone.py", 0, 3000, status="removed", patch=None),  # summarised from its counts
        changed("new_name.py", 0, 0, status="renamed", patch=None),  # a pure rename
    ],
)
def test_files_without_a_patch_that_need_none_are_kept(file: ChangedFile) -> None:
    assert skip_reason(file, attributes="", exclude=()) is None


def test_select_orders_by_value_then_size_then_path_and_keeps_skipped_in_input_order() -> None:
    files = [
        changed("README.md", 50),
        changed("yarn.lock", 900),
        changed("tests/test_a.py", 10),
        changed("src/b.py", 5),
        changed("pyproject.toml", 2),
        changed("src/a.py", 3, 2),
        changed("docs/skip.md", 1),
        changed("src/big.py", 100, 100),
        changed("tests/test_b.py", 40),
    ]
    review, skipped = select_files(files, attributes="", exclude=("docs",))
    assert [(rf.file.path, rf.category) for rf in review] == [
        ("src/big.py", Category.SOURCE),
        ("src/a.py", Category.SOURCE),  # 5 lines changed, like src/b.py: by path
        ("src/b.py", Category.SOURCE),
        ("tests/test_b.py", Category.TEST),
        ("tests/test_a.py", Category.TEST),
        ("README.md", Category.DOCS),
        ("pyproject.toml", Category.CONFIG),
    ]
    assert all(isinstance(rf, ReviewFile) for rf in review)
    assert skipped == [
        Skipped(path="yarn.lock", reason="lock file"),
        Skipped(path="docs/skip.md", reason="excluded by the exclude input (docs)"),
    ]

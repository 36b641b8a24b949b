"""Which library counts OpenAI's tokens: tiktoken with the package's shipped encodings, against
``bpe-openai`` (GitHub's ``bpe`` crate, which bundles its own copy of the same files).

    python bench/tokenizers.py [--repeat N]

``bpe-openai`` is not a dependency: install it into the venv for this comparison
(``pip install bpe-openai``); without it only tiktoken's figures are printed.

Texts: every file's patch of the six pull requests of the click corpus
(``../shared/corpus/click-prs.bundle``), every text file of the largest pull request's head tree
(all of click), and every file under ``tests/fixtures``. Printed per encoding (o200k_base,
cl100k_base):

- correctness: texts whose token ids differ between the two libraries (must be 0), and the tokens
  counted in all;
- load: the first count's cost in a fresh process (reading the ranks, building the encoder),
  median of N;
- speed: counting 1 MiB made of the corpus's patches (in four texts: bpe-openai refuses one of
  1,000,000 characters or more), median of N, and its characters a token; the ratio is
  bpe-openai's time over tiktoken's measured in the same run;
- size: what each installs (the distribution's files), and the shipped encodings' bytes.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from memory_action.model.tokenizer import CL100K, O200K, Tokenizer, rank_file  # noqa: E402
from tests.fakes.click_corpus import bundle_path, load_corpus  # noqa: E402

MIB = 1 << 20


def _texts(work: Path) -> tuple[list[str], str]:
    corpus = load_corpus(bundle_path(), work / "click")
    texts = [str(f.get("patch", "")) for pull in corpus.pulls for f in pull.files]
    largest = corpus.pulls[-1]
    for path in largest.head:
        try:
            texts.append(largest.head[path].decode())
        except (KeyError, UnicodeDecodeError):
            continue
    for path in sorted((ROOT / "tests" / "fixtures").rglob("*")):
        if path.is_file():
            try:
                texts.append(path.read_text())
            except UnicodeDecodeError:
                continue
    patches = "".join(t for t in texts[: sum(len(p.files) for p in corpus.pulls)])
    mib = (patches * (MIB // max(1, len(patches)) + 1))[:MIB]
    return [t for t in texts if t], mib


def _chunks(text: str) -> list[str]:
    """Four quarters, at line ends: bpe-openai refuses one text of 1,000,000 characters."""
    quarter, start, out = len(text) // 4, 0, []
    for _ in range(3):
        end = text.index("\n", start + quarter) + 1
        out.append(text[start:end])
        start = end
    return [*out, text[start:]]


def _installed_bytes(dist: str) -> int | None:
    try:
        files = importlib.metadata.distribution(dist).files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    return sum(f.locate().stat().st_size for f in files if Path(str(f.locate())).exists())


def _load_seconds(code: str, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
        runs.append(float(out.strip().splitlines()[-1]))
    return statistics.median(runs)


def _median_time(fn: object, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    try:
        import bpe_openai  # type: ignore[import-not-found]  # noqa: PLC0415 - optional
    except ImportError:
        bpe_openai = None
    with tempfile.TemporaryDirectory() as tmp:
        texts, mib = _texts(Path(tmp))
    print(f"texts: {len(texts)} ({sum(map(len, texts)):,} characters); 1 MiB sample: {len(mib):,}")
    failures = 0
    for name in (O200K, CL100K):
        ours = Tokenizer(encoding=name)
        ours.count("")  # load
        encoding = ours.encoding_of()  # the library's own encoder, timed alone
        tokens = sum(len(encoding.encode_ordinary(t)) for t in texts)
        line = f"{name}: {tokens:,} tokens"
        load_ours = _load_seconds(
            "import time; t = time.perf_counter(); from memory_action.model.tokenizer import "
            f"Tokenizer; Tokenizer(encoding={name!r}).count('x'); print(time.perf_counter() - t)",
            args.repeat,
        )
        speed_ours = _median_time(
            lambda e=encoding: [e.encode_ordinary(c) for c in _chunks(mib)], args.repeat
        )
        per = len(mib) / len(encoding.encode_ordinary(mib))
        print(line)
        print(
            f"  tiktoken + shipped file: load {load_ours * 1000:,.0f} ms, 1 MiB in "
            f"{speed_ours * 1000:,.0f} ms ({per:.2f} characters a token)"
        )
        if bpe_openai is None:
            continue
        theirs = bpe_openai.get_encoding(name)
        differ = sum(
            1
            for t in texts
            if list(theirs.encode(t, disallowed_special=())) != encoding.encode_ordinary(t)
        )
        failures += differ
        load_theirs = _load_seconds(
            "import time; t = time.perf_counter(); import bpe_openai; "
            f"bpe_openai.get_encoding({name!r}).encode('x'); print(time.perf_counter() - t)",
            args.repeat,
        )
        speed_theirs = _median_time(
            lambda e=theirs: [e.encode(c, disallowed_special=()) for c in _chunks(mib)],
            args.repeat,
        )
        # The crate's own count, which the Python API does not offer (its backend's method).
        backend = theirs._backend
        count_theirs = _median_time(
            lambda b=backend: [b.count(c) for c in _chunks(mib)], args.repeat
        )
        if sum(backend.count(c) for c in _chunks(mib)) != sum(
            len(encoding.encode_ordinary(c)) for c in _chunks(mib)
        ):
            failures += 1
            print("  bpe-openai's count differs from its encode on the 1 MiB sample")
        print(
            f"  bpe-openai:              load {load_theirs * 1000:,.0f} ms, 1 MiB in "
            f"{speed_theirs * 1000:,.0f} ms ({speed_theirs / speed_ours:.2f}x tiktoken's); "
            f"its backend's count {count_theirs * 1000:,.0f} ms "
            f"({count_theirs / speed_ours:.2f}x)"
        )
        print(f"  texts whose token ids differ: {differ} of {len(texts)}")
    shipped = sum(len(rank_file(n)) for n in (O200K, CL100K))
    packed = sum(
        (ROOT / "memory_action" / "model" / "encodings" / f"{n}.tiktoken.gz").stat().st_size
        for n in (O200K, CL100K)
    )
    print("installed size:")
    for dist in ("tiktoken", "bpe-openai"):
        size = _installed_bytes(dist)
        print(f"  {dist}: " + (f"{size / MIB:,.1f} MiB" if size is not None else "not installed"))
    print(
        f"  shipped encodings: {packed / MIB:,.1f} MiB gzipped ({shipped / MIB:,.1f} MiB as text)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

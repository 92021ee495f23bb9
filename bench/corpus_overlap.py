"""How much of corpus/lint repeats public code: for every corpus file, the count of its
long lines (stripped, at least --min-chars characters) found verbatim in any file under
the folders of originals named on the command line. Import lines do not count.

    python bench/corpus_overlap.py /work/originals/repo_a /work/originals/repo_b

The originals stay outside the repository; this script only reads them.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "lint"
_IMPORT = re.compile(r"(import|from)\s+[\w.]+")
SUFFIXES = {".py", ".pyi", ".txt", ".md", ".cfg", ".toml", ".yaml", ".yml", ".sh"}


def long_lines(text: str, min_chars: int, imports: bool = False) -> Iterator[str]:
    """The stripped lines of `text` with at least `min_chars` characters; imports left out
    unless `imports` (`import torch.distributed as dist` is the API's spelling, not text)."""
    for line in text.splitlines():
        stripped = line.strip()
        if len(stripped) >= min_chars and (imports or not _IMPORT.match(stripped)):
            yield stripped


def original_lines(folders: Iterable[Path], min_chars: int, imports: bool) -> set[str]:
    """Every long line of every readable text file under `folders`."""
    seen: set[str] = set()
    for folder in folders:
        files = [folder] if folder.is_file() else folder.rglob("*")
        for path in files:
            if path.is_file() and path.suffix in SUFFIXES:
                text = path.read_text(encoding="utf-8", errors="replace")
                seen.update(long_lines(text, min_chars, imports))
    return seen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("originals", nargs="+", type=Path, help="folders (or files) of originals")
    parser.add_argument("--min-chars", type=int, default=30, help="shortest line counted")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="corpus folder to measure")
    parser.add_argument("--imports", action="store_true", help="count import lines too")
    parser.add_argument("--all", action="store_true", help="also list files sharing no line")
    parser.add_argument("--show", action="store_true", help="print the shared lines")
    args = parser.parse_args(argv)

    missing = [str(p) for p in args.originals if not p.exists()]
    if missing:
        print(f"error: no such folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    known = original_lines(args.originals, args.min_chars, args.imports)
    total_shared = total_long = 0
    for path in sorted(args.corpus.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = list(long_lines(text, args.min_chars, args.imports))
        shared = [line for line in lines if line in known]
        total_shared += len(shared)
        total_long += len(lines)
        if shared or args.all:
            print(f"{len(shared):4d} / {len(lines):4d}  {path.relative_to(args.corpus)}")
            if args.show:
                for line in shared:
                    print(f"            {line}")
    print(f"total: {total_shared} of {total_long} long lines shared")
    return 0


if __name__ == "__main__":
    sys.exit(main())

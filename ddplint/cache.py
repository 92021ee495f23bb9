"""Results of unchanged files, kept between runs in `.ddplint_cache/` (off: `--no-cache`).

An entry is keyed by the ddplint version and code (so an edited checkout never reads entries
of an older summary format), the selected codes, the file's path and bytes, and, for files
that use project helpers, the summaries of the whole run.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from typing import Any

from ddplint import __version__

CACHE_DIR = ".ddplint_cache"


@functools.cache
def code_version() -> str:
    """The version plus a digest of ddplint's own files (name, size, modification time)."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def key(*parts: str | bytes) -> str:
    digest = hashlib.sha256(code_version().encode())
    for part in parts:
        digest.update(b"\0")
        digest.update(part if isinstance(part, bytes) else part.encode("utf-8", "replace"))
    return digest.hexdigest()


class Cache:
    """A folder of pickled entries; unreadable entries count as misses. Without a folder
    (`--no-cache`) the entries live in this object only, for one run: what a step of it
    learnt (the summaries `--check-importers` reads to find the importers) is not
    computed again by the next, and nothing outlives the run."""

    def __init__(self, root: Path | None) -> None:
        self.folder = root / CACHE_DIR / __version__ if root is not None else None
        self._memory: dict[str, Any] = {}

    def get(self, entry: str) -> Any | None:
        if self.folder is None:
            return self._memory.get(entry)
        import pickle  # here: a run without a cache folder imports neither

        try:
            with open(self.folder / entry[:2] / entry, "rb") as handle:
                return pickle.load(handle)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
            return None

    def put(self, entry: str, value: Any) -> None:
        if self.folder is None:
            self._memory[entry] = value
            return
        import pickle
        import tempfile

        folder = self.folder / entry[:2]
        try:
            folder.mkdir(parents=True, exist_ok=True)
            gitignore = self.folder.parent / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Automatically created by ddplint.\n*\n")
            with tempfile.NamedTemporaryFile("wb", dir=folder, delete=False) as handle:
                pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(handle.name, folder / entry)
        except OSError:
            pass  # a read-only tree still gets checked, only not cached

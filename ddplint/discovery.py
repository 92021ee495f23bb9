"""Which files to check: walk folders, honour .gitignore and exclude patterns."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

# Folders nobody wants linted, as ruff skips them by default: the default of `exclude`, which a
# configured or command-line `exclude` replaces (`extend-exclude` adds to it).
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".ddplint_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)


class MissingPathError(FileNotFoundError):
    """A path named on the command line that does not exist."""


ErrorSink = Callable[[str], None]


def _ignore_error(message: str) -> None:
    del message


@dataclass(frozen=True)
class Excluder:
    """Exclude patterns (gitignore syntax) relative to the project root."""

    root: Path
    spec: pathspec.GitIgnoreSpec

    @classmethod
    def build(cls, root: Path, patterns: Iterable[str]) -> Excluder:
        return cls(root, pathspec.GitIgnoreSpec.from_lines(patterns))

    def excludes(self, path: Path, is_dir: bool) -> bool:
        try:
            relative = path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            relative = path.name
        if is_dir:
            relative += "/"
        return self.spec.match_file(relative) or self.spec.match_file(
            path.name + ("/" if is_dir else "")
        )


class _GitIgnores:
    """The stack of .gitignore files above the folder being walked."""

    def __init__(self) -> None:
        self.specs: list[tuple[Path, pathspec.GitIgnoreSpec]] = []

    def enter(self, folder: Path, on_error: ErrorSink = _ignore_error) -> None:
        ignore_file = folder / ".gitignore"
        try:
            if not ignore_file.is_file():
                return
            lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError as exc:
            on_error(f"cannot read {ignore_file}: {exc.strerror or exc}")
            return
        self.specs.append((folder, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for base, spec in self.specs:
            try:
                relative = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if spec.match_file(relative + ("/" if is_dir else "")):
                return True
        return False


def _git_ignores_above(folder: Path) -> _GitIgnores:
    """.gitignore files of the folders above `folder`, up to the repository root."""
    stack = _GitIgnores()
    chain = []
    for parent in (folder, *folder.parents):
        chain.append(parent)
        try:
            if (parent / ".git").exists():
                break
        except OSError:
            continue
    else:
        chain = [folder]
    for parent in reversed(chain[1:]):
        stack.enter(parent)
    return stack


def discover(
    paths: Iterable[Path],
    excluder: Excluder,
    respect_gitignore: bool = True,
    force_exclude: bool = False,
    on_error: ErrorSink = _ignore_error,
) -> Iterator[Path]:
    """Python files under `paths`, in a stable order; explicit files always come out
    unless `force_exclude`. Folders that cannot be read go to `on_error`, one line each,
    and the walk goes on."""
    seen: set[Path] = set()
    for path in paths:
        try:
            exists, is_file = path.exists(), path.is_file()
        except OSError as exc:
            on_error(f"cannot read {path}: {exc.strerror or exc}")
            continue
        if not exists:
            raise MissingPathError(f"{path}: no such file or directory")
        if is_file:
            if force_exclude and excluder.excludes(path, is_dir=False):
                continue
            if path.resolve() not in seen:
                seen.add(path.resolve())
                yield path
            continue
        for found in _walk(path, excluder, respect_gitignore, on_error):
            if found.resolve() not in seen:
                seen.add(found.resolve())
                yield found


def _walk(
    top: Path, excluder: Excluder, respect_gitignore: bool, on_error: ErrorSink
) -> Iterator[Path]:
    ignores = _git_ignores_above(top.resolve()) if respect_gitignore else _GitIgnores()
    yield from _walk_folder(top, excluder, ignores, respect_gitignore, on_error)


def _walk_folder(
    folder: Path,
    excluder: Excluder,
    ignores: _GitIgnores,
    respect_gitignore: bool,
    on_error: ErrorSink,
) -> Iterator[Path]:
    resolved = folder.resolve()
    # Named on the command line although excluded (`ddplint check dist/`): its patterns
    # would match everything below it, so only .gitignore applies there, as in ruff.
    named_anyway = excluder.excludes(folder, is_dir=True)
    try:
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
    except OSError as exc:
        on_error(f"cannot read folder {folder}: {exc.strerror or exc}")
        return
    depth = len(ignores.specs)
    if respect_gitignore:
        ignores.enter(resolved, on_error)
    for entry in entries:
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            is_file = not is_dir and entry.name.endswith(".py") and entry.is_file()
        except OSError as exc:
            on_error(f"cannot read {path}: {exc.strerror or exc}")
            continue
        if not named_anyway and excluder.excludes(path, is_dir):
            continue
        if respect_gitignore and ignores.ignored(resolved / entry.name, is_dir):
            continue
        if is_dir:
            yield from _walk_folder(path, excluder, ignores, respect_gitignore, on_error)
        elif is_file:
            yield path
    del ignores.specs[depth:]

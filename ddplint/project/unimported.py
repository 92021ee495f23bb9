"""Whether a module of a project is imported by nothing in it, read from the project's text.

An application (scripts, no packaging: `liveness.project_exports`) runs its scripts and
what they import. A module none of its files may import is a leftover: a trainer replaced
by another, a copy kept beside the one in use. The test errs towards "imported": a module
counts as imported when any other file of the project may name it in an import (a
component of a dotted name the text scan of its imports finds, `import_scan`, or of a
literal `import_module("core.trainer")`), in a string holding a module path or a file
name (`"core.trainer.Trainer"`, `"configs/trainer.py"`), as an attribute of its package
(`core.trainer`), or picks a module of its package by a computed name; when any
file imports a module named by a value only (`import_module(args.trainer)`, a file loaded
from a computed path); when a settings file, a command file, the packaging or a notebook
names it as a word; and when the project's bounds are a guess: no marker (`.git`,
`pyproject.toml`) fixes them and the run was not started in its folder.
"""

from __future__ import annotations

import os
import re

from ddplint.project.import_scan import imported_by_name, scanned_imports
from ddplint.project_files import PROJECT_MARKERS, project_files, project_root

# Module names that are imported without being named (a package's `__init__`), run by a
# tool (`conftest`, `setup`), or by `python -m package` (`__main__`).
_IMPLICIT = frozenset({"__init__", "__main__", "conftest", "setup", "manage"})
# Imports of a module named by a value only: `import_module(args.trainer)`, a file loaded
# from a computed path.
_BY_VALUE = re.compile(
    r"\b(?:import_module|__import__)\(\s*(?:f?[\"']\{|[^\"'\s])"
    r"|\b(?:spec_from_file_location|run_path|SourceFileLoader|load_source)\("
)


def never_imported(path: str) -> bool:
    """No file of `path`'s project may import the module at `path` (see the module
    docstring); False whenever that is not certain."""
    absolute = os.path.abspath(path)
    root = project_root(absolute)
    stem = os.path.splitext(os.path.basename(absolute))[0]
    if (
        stem in _IMPLICIT
        or not stem.isidentifier()
        or not (
            root == os.getcwd()
            or any(os.path.exists(os.path.join(root, m)) for m in PROJECT_MARKERS)
        )
    ):
        return False
    files = project_files(root)
    package = os.path.basename(os.path.dirname(absolute))
    if files.notebook_paths or files.matching(_BY_VALUE):
        return False
    word = re.escape(stem)
    # `"core.trainer"`, `"trainer.Trainer"`, `"configs/trainer.py"`; `pkg.trainer`
    mention = re.compile(
        rf"[\"'][\w./-]*(?:[./]{word}\b|\b{word}[./])[\w./-]*[\"']"
        rf"|\b{re.escape(package)}\.{word}\b"
    )
    for other in files.naming(stem) - {absolute}:
        text = files.text(other) or ""
        if not other.endswith(".py") or mention.search(text):
            return False  # the entry-point configuration, or a module path
        names = [*scanned_imports(text), *imported_by_name(text)[0]]
        if any(stem in name.split(".") for name in names):
            return False
    for other in files.naming(package) - {absolute}:  # `import_module("models." + name)`
        picked = imported_by_name(files.text(other) or "")[1]
        if any(p.rpartition(".")[2] == package for p in picked):
            return False
    others = [*files.settings_paths, *files.command_paths]
    return not any(stem in _words(files.text(p) or "") for p in others)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text))

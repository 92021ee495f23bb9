"""Vendored code: a copy of another project's repository kept inside this one
(`furnace/apex/` holding NVIDIA apex: its `setup.py`, README, examples, tests and docs),
which the rest of the project imports by its package name as if it were installed (`from
apex.parallel import DistributedDataParallel`).

Its examples, tests and scripts belong to the library it copies: the project does not run
them, and its maintainer would not change them. The checker reports findings there as
unproven (`ddplint.domain.liveness`), shown under `--preview`. A nested project the rest of
the project does not import by name (an example with its own packaging), or one that is
only a package (a workspace member: `projects/mnist/` with `pyproject.toml` and `src/`,
imported by a sibling member), is not vendored: its code is the project's own."""

from __future__ import annotations

import os
import re

from ddplint.project_files import folder_root, project_files

# What makes a folder a project of its own: its packaging.
_PACKAGING = ("setup.py", "pyproject.toml", "setup.cfg")
# What a whole repository carries besides its package: a README and two of these folders.
_READMES = ("README.md", "README.rst", "README.txt", "README")
_REPOSITORY_FOLDERS = ("examples", "tests", "test", "docs", "benchmarks", "scripts")


def vendored_mark(path: str) -> str | None:
    """The folder of the vendored project `path` lies in (relative to the project that
    vendors it), or None."""
    folder = os.path.dirname(os.path.abspath(path))
    cwd = os.getcwd()
    while True:
        parent = os.path.dirname(folder)
        if parent == folder or cwd == folder or cwd.startswith(folder + os.sep):
            return None  # the top, or the project being checked is this one
        if any(os.path.isfile(os.path.join(folder, m)) for m in _PACKAGING):
            outer = folder_root(parent)
            if (
                (outer == parent or parent.startswith(outer + os.sep))
                and _repository_copy(folder)
                and _imported_by_name(outer, folder)
            ):
                return os.path.relpath(folder, outer)
            return None
        folder = parent


def _repository_copy(folder: str) -> bool:
    """`folder` holds a whole repository, not only a package: a README and at least two of
    the folders a repository carries beside its code (examples, tests, docs, ...)."""
    if not any(os.path.isfile(os.path.join(folder, name)) for name in _READMES):
        return False
    return sum(os.path.isdir(os.path.join(folder, name)) for name in _REPOSITORY_FOLDERS) >= 2


def _imported_by_name(outer: str, nested: str) -> bool:
    """A Python file of the project at `outer`, outside the folder `nested`, imports the
    package the folder is named for as a top-level name (`import apex`, `from apex.amp
    import ...`)."""
    name = os.path.basename(nested)
    if not name.isidentifier():
        return False
    pattern = re.compile(rf"^[ \t]*(?:from[ \t]+{name}[ \t.]|import[ \t]+{name}\b)", re.M)
    return any(
        not other.startswith(nested + os.sep) for other in project_files(outer).matching(pattern)
    )

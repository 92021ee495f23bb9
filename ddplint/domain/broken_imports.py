"""Files that stop at their own imports: a top-level `from runner import DistRunner` where
`runner` is a module of the project that binds no `DistRunner` (an old script left behind
when the class was renamed). Such a file cannot start, so none of its code is known to
run. Read from the texts with the standard parser; anything the text cannot settle counts
as bound: a star import, a module `__getattr__`, names made through `globals()`, `exec` or
`sys.modules`, a submodule of a package, a module outside the project."""

from __future__ import annotations

import ast
import functools
import os
import re

from ddplint.domain.text_trees import stdlib_tree
from ddplint.project_files import project_files

_DYNAMIC = ("globals()", "exec(", "sys.modules", "__getattr__", "setattr(")
# A top-level `from module import names` (at column 0), its names parenthesised or not.
_FROM_IMPORT = re.compile(
    r"^from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)", re.M
)


def missing_import(path: str, root: str) -> str | None:
    """How a message names the first top-level import of `path` that its project module
    does not bind (`DistRunner` from `runner/__init__.py`); None when every one is bound
    or out of sight."""
    files = project_files(root)
    for match in _FROM_IMPORT.finditer(files.text(path) or ""):
        module = _module_file(path, root, match.group(1))
        if module is None:
            continue
        bound = _bound_names(files.text(module))
        if bound is None:
            continue
        for name in _imported(match.group(2)):
            if name not in bound and not _submodule(module, name):
                shown = os.path.relpath(module, root)
                return f"`{name}` from `{match.group(1)}` (`{shown}` binds no such name)"
    return None


def _imported(names: str) -> list[str]:
    """The names of `a, b as c` (or `(a, b)`); none when a star is among them."""
    found = []
    for item in names.strip().strip("()").replace("\\", " ").split(","):
        words = item.split()
        if not words:
            continue
        if words[0] == "*" or not words[0].isidentifier():
            return []
        found.append(words[0])
    return found


def _module_file(path: str, root: str, module: str) -> str | None:
    """The project file `module` names, seen from the script's folder or the root."""
    parts = module.split(".")
    for base in dict.fromkeys((os.path.dirname(os.path.abspath(path)), root)):
        stem = os.path.join(base, *parts)
        for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
            if os.path.isfile(candidate):
                return candidate
    return None


def _submodule(module: str, name: str) -> bool:
    """`name` is a submodule of the package `module` is the `__init__.py` of."""
    if os.path.basename(module) != "__init__.py":
        return False
    folder = os.path.dirname(module)
    return os.path.isfile(os.path.join(folder, name + ".py")) or os.path.isdir(
        os.path.join(folder, name)
    )


@functools.lru_cache(maxsize=256)
def _bound_names(text: str | None) -> frozenset[str] | None:
    """The names a module's text binds at its top level (in conditional blocks too);
    None when the text cannot settle it."""
    if text is None or any(word in text for word in _DYNAMIC):
        return None
    tree = stdlib_tree(text)
    if tree is None:
        return None
    bound: set[str] = set()
    for node in tree.body:
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                bound.add(child.id)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(child.name)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                for alias in child.names:
                    if alias.name == "*":
                        return None
                    bound.add(alias.asname or alias.name.split(".")[0])
    return frozenset(bound)

"""Whether another module may use a function a module defines, beyond naming it: `from
model.data_parallel import DataParallel` in a trainer that never calls the factory, or
`torch.nn.DataParallel` in a file that never imports the defining module, is a mention
that says nothing about whether the function runs (`ddplint.domain.liveness`)."""

from __future__ import annotations

import ast
import os

from ddplint.domain.text_trees import stdlib_tree

_KNOWN: dict[tuple[str, str, str], bool] = {}


def may_use(path: str, text: str, name: str, module: str) -> bool:
    """The module at `path` (its source `text`) may use the function `name` of the
    project module `module` (its file's base name): it reads the name itself (not only
    imports it), reads it as an attribute of anything but another imported module (a method
    call on an object, `helpers.step`; not `torch.nn.DataParallel`), imports it under
    another name, names it in a string whose whole value it is (`__all__`, a registry; not
    a docstring, a keyword's value or a compared value), or is a package's `__init__.py` (a
    re-export). True when unsure (the text does not parse)."""
    key = (path, name, module)
    known = _KNOWN.get(key)
    if known is None:
        known = _KNOWN[key] = _may_use(path, text, name, module)
    return known


def _defines(tree: ast.Module, name: str) -> bool:
    """The module defines a function or class `name` of its own at its top level and
    imports no `name` from another module: its reads of `name` are of its own (a copy of
    a script calling its own `main`), not of the function asked about."""
    defined = any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name
        for n in tree.body
    )
    imported = any(
        isinstance(n, ast.ImportFrom) and any(a.name in (name, "*") for a in n.names)
        for n in ast.walk(tree)
    )
    return defined and not imported


def _may_use(path: str, text: str, name: str, module: str) -> bool:
    if os.path.basename(path) == "__init__.py":
        return True
    tree = stdlib_tree(text)
    if tree is None:
        return True
    others = _other_modules(tree, module)
    # strings that hold data, not names: docstrings, keyword values, compared values
    prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, (ast.Expr, ast.keyword))}
    prose.update(
        id(c)
        for n in ast.walk(tree)
        if isinstance(n, ast.Compare)
        for c in (n.left, *n.comparators)
    )
    own = _defines(tree, name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name == name and alias.asname not in (None, name):
                    return True
                if name == module and module in (alias.name, *(node.module or "").split(".")):
                    return True  # imports the module itself
        elif isinstance(node, ast.Import):
            if name == module and any(module in a.name.split(".") for a in node.names):
                return True
        elif isinstance(node, ast.Name) and node.id == name and not own:
            return True
        elif isinstance(node, ast.Attribute) and node.attr == name:
            if _root(node) not in others:
                return True  # `runner.step()`, `helpers.step()`: maybe this function
        elif (
            isinstance(node, ast.Constant)
            and node.value == name  # `__all__`, a registry's key, `getattr(m, "name")`
            and id(node) not in prose
        ):
            return True
    return False


def _other_modules(tree: ast.Module, module: str) -> set[str]:
    """The names the module's imports bind to modules other than `module` (`torch` of
    `import torch`, `nn` of `import torch.nn as nn`): their attributes are not ours."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if module not in alias.name.split("."):
                    bound.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and module not in (node.module or "").split("."):
            bound.update(a.asname or a.name for a in node.names if a.name != module)
    return bound


def _root(node: ast.Attribute) -> str | None:
    """`torch` of `torch.nn.DataParallel`; None when the chain starts elsewhere."""
    value: ast.expr = node
    while isinstance(value, ast.Attribute):
        value = value.value
    return value.id if isinstance(value, ast.Name) else None

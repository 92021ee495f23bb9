"""Where a project's packages live, as its packaging files declare it, read without running
anything: `package_dir=` and `packages=find_packages(where=...)` in setup.py (literal values
only), `[options] package_dir` and `[options.packages.find] where` in setup.cfg, and
`[tool.setuptools] package-dir` and `[tool.setuptools.packages.find] where` in
pyproject.toml. A file that cannot be read or parsed, a value computed at run time, or a
folder outside the project root declares nothing."""

from __future__ import annotations

import ast
import configparser
import functools
import os
import sys
from collections.abc import Iterator

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# (package, folder): modules of `package` ("" for top-level modules) are files in `folder`.
PackageDir = tuple[str, str]
_FINDERS = frozenset({"find_packages", "find_namespace_packages"})


_FILES = ("pyproject.toml", "setup.cfg", "setup.py")


def declared_package_dirs(root: str) -> tuple[PackageDir, ...]:
    """The folders (absolute) the packaging files at `root` map packages to; pyproject.toml
    first, then setup.cfg, then setup.py. Parsed once per process for each version of the
    files (their size and modification time)."""
    return _declared(root, tuple(_stamp(os.path.join(root, name)) for name in _FILES))


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


@functools.cache
def _declared(root: str, stamps: tuple[tuple[int, int] | None, ...]) -> tuple[PackageDir, ...]:
    if not any(stamps):
        return ()
    found: dict[PackageDir, None] = {}
    for package, folder in (*_from_pyproject(root), *_from_setup_cfg(root), *_from_setup_py(root)):
        absolute = _inside(root, folder)
        if absolute is not None and all(p.isidentifier() for p in package.split(".") if package):
            found[(package, absolute)] = None
    return tuple(found)


def _inside(root: str, folder: str) -> str | None:
    """`folder` (relative to `root`) as an absolute path, None when it leaves the root."""
    if os.path.isabs(folder):
        return None
    absolute = os.path.normpath(os.path.join(root, folder))
    inside = absolute == root or absolute.startswith(root.rstrip(os.sep) + os.sep)
    return absolute if inside else None


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _from_pyproject(root: str) -> Iterator[PackageDir]:
    text = _read(os.path.join(root, "pyproject.toml"))
    try:
        data = tomllib.loads(text) if text is not None else {}
    except tomllib.TOMLDecodeError:
        return
    tool = data.get("tool")
    setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
    if not isinstance(setuptools, dict):
        return
    mapping = setuptools.get("package-dir")
    if isinstance(mapping, dict):
        yield from ((k, v) for k, v in mapping.items() if isinstance(v, str))
    packages = setuptools.get("packages")
    find = packages.get("find") if isinstance(packages, dict) else None
    where = find.get("where") if isinstance(find, dict) else None
    if isinstance(where, list):
        yield from (("", w) for w in where if isinstance(w, str))


def _from_setup_cfg(root: str) -> Iterator[PackageDir]:
    text = _read(os.path.join(root, "setup.cfg"))
    if text is None:
        return
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return
    for line in parser.get("options", "package_dir", fallback="").splitlines():
        package, equals, folder = line.partition("=")
        if equals:
            yield package.strip(), folder.strip()
    for line in parser.get("options.packages.find", "where", fallback="").splitlines():
        if line.strip():
            yield "", line.strip()


def _from_setup_py(root: str) -> Iterator[PackageDir]:
    text = _read(os.path.join(root, "setup.py"))
    try:
        tree = ast.parse(text) if text is not None else None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    if tree is None:
        return
    constants = _module_assignments(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _last_name(node.func) == "setup":
            for keyword in node.keywords:
                value = keyword.value
                if isinstance(value, ast.Name):  # `package_dir=PACKAGE_DIR`
                    value = constants.get(value.id, value)
                if keyword.arg == "package_dir":
                    yield from _literal_mapping(value)
                elif keyword.arg == "packages":
                    yield from _find_where(value)


def _module_assignments(tree: ast.Module) -> dict[str, ast.expr]:
    """Names assigned exactly once at module level, with their value."""
    values: dict[str, ast.expr] = {}
    counts: dict[str, int] = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    values[target.id] = statement.value
                    counts[target.id] = counts.get(target.id, 0) + 1
    return {name: value for name, value in values.items() if counts[name] == 1}


def _last_name(func: ast.expr) -> str:
    """`setup` for `setup` or `setuptools.setup`; empty for anything else called."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _literal_mapping(value: ast.expr) -> Iterator[PackageDir]:
    """The items of a dict literal of strings `{"pkg": "folder"}`; nothing from a dict
    that merges another (`{**base, ...}`): its entries may replace these."""
    if isinstance(value, ast.Dict) and None not in value.keys:
        for key, folder in zip(value.keys, value.values, strict=True):
            package, path = _text(key), _text(folder)
            if package is not None and path is not None:
                yield package, path


def _find_where(value: ast.expr) -> Iterator[PackageDir]:
    """`find_packages("src")` / `find_packages(where="src")`: packages live in that folder."""
    if not (isinstance(value, ast.Call) and _last_name(value.func) in _FINDERS):
        return
    where = value.args[0] if value.args else None
    for keyword in value.keywords:
        if keyword.arg == "where":
            where = keyword.value
    folder = _text(where)
    if folder is not None:
        yield "", folder


def _text(node: ast.expr | None) -> str | None:
    """The value of a string literal, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None

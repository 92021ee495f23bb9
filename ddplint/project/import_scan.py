"""The names a module's import statements may bind, read from its text without a parse.

`scanned_imports` gives a superset of what `ddplint.names.ImportMap` collects from the
parsed module (`ModuleSummary.imports`: the modules named by import statements and the
qualified names they bind): every `import ...` and `from ... import ...` statement is
found wherever it stands (in a function, after `;`, parenthesised over several lines,
continued with a backslash), and text that only looks like one (in a string or a comment)
adds names too. So the project modules reached through it are a superset of those reached
through the parsed imports: a module it does not reach cannot be imported.
"""

from __future__ import annotations

import bisect
import functools
import re

_CONTINUED = re.compile(r"\\\r?\n")
_COMMENT_IN_PARENS = re.compile(r"#[^\n]*")
# `from` and `import` not after a name or a dot. Each pattern starts with its keyword, the
# test of the character before it following (`(?<=(?<![\w.])from)`): a pattern led by a
# literal is searched for that literal first, many times faster than one led by the test.
_FROM = re.compile(
    r"from(?<=(?<![\w.])from)\s+(\.*[\w.]*)\s+import\s*(\((?:[^)#]|#[^\n]*)*\)?|[^\n;]*)",
    re.ASCII,
)
_IMPORT = re.compile(r"import(?<=(?<![\w.])import)\s+([^\n;]*)", re.ASCII)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*", re.ASCII)
# A module named by a string (`importlib.import_module("train.metrics")`), or picked from a
# package by a computed name (`import_module("data." + name)`, `import_module(f"models.{arch}")`).
# The function's name leads and the test of what stands before it follows, as in `_FROM`.
_BY_NAME = re.compile(
    r"(?:import_module|__import__)"
    r"(?:(?<=(?<![\w.])import_module)|(?<=importlib\.import_module)"
    r"|(?<=(?<![\w.])__import__)|(?<=importlib\.__import__))"
    r"\(\s*f?([\"'])([A-Za-z_][\w.]*)(\{|\1)",
    re.ASCII,
)


def _names(clause: str) -> list[tuple[str, str | None]]:
    """(dotted name, alias) of each item of an import clause (`a.b as c, d`)."""
    clause = _COMMENT_IN_PARENS.sub(" ", clause).strip().strip("()")
    found: list[tuple[str, str | None]] = []
    for item in clause.split(","):
        words = item.split()
        if not words:
            continue
        name = _DOTTED.match(item.strip())
        if name is None:
            continue
        dotted = re.sub(r"\s+", "", name.group())
        alias = words[-1] if len(words) >= 3 and words[-2] == "as" else None
        found.append((dotted, alias))
    return found


def scanned_imports(text: str) -> frozenset[str]:
    """A superset of `ModuleSummary.imports` for a module whose text is `text`."""
    return _scan(text)[0]


def imported_by_name(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """What the module imports by a name in a string: the modules a whole literal names,
    and the packages any of whose modules a computed name may pick (the literal prefix
    before the computed part, `data` of `"data." + name`). Relative names are left out."""
    whole: set[str] = set()
    packages: set[str] = set()
    if "import_module" not in text and "__import__" not in text:
        return frozenset(), frozenset()
    for match in _BY_NAME.finditer(text):
        name, computed = match.group(2), match.group(3) == "{" or match.group(2).endswith(".")
        if not computed:
            whole.add(name)
        elif package := (name[:-1] if name.endswith(".") else name.rpartition(".")[0]):
            packages.add(package)  # `f"models.resnet{depth}"`: a module of `models`
    return frozenset(whole), frozenset(packages)


def scanned_bindings(text: str) -> dict[str, frozenset[str]]:
    """A superset of the local names the module's import statements bind, each with the
    qualified names it may stand for (`ModuleSummary.reexports`)."""
    return dict(_scan(text)[1])


# One entry per module text: a one-file run of timm scans its 273 imported modules, then asks
# the bindings of many of them again (`ModuleIndex`, `NamesTorchDistributed`).
@functools.lru_cache(maxsize=1024)
def _scan(text: str) -> tuple[frozenset[str], tuple[tuple[str, frozenset[str]], ...]]:
    text = _CONTINUED.sub(" ", text)
    found: set[str] = set()
    bound: dict[str, set[str]] = {}
    starts: list[int] = []  # the `from` statements' spans, in order and disjoint
    ends: list[int] = []
    for match in _FROM.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
        module = match.group(1)
        found.add(module)
        joiner = "" if module.endswith(".") else "."
        for name, alias in _names(match.group(2)):
            qualified = f"{module}{joiner}{name}" if module else name
            found.add(qualified)
            for local in {name, alias or name}:
                bound.setdefault(local, set()).add(qualified)
    for match in _IMPORT.finditer(text):
        inside = bisect.bisect_right(starts, match.start()) - 1  # the last one before it
        if inside >= 0 and match.start() < ends[inside]:
            continue
        for name, alias in _names(match.group(1)):
            head = name.split(".")[0]
            found.update((name, head))
            bound.setdefault(head, set()).add(head)
            if alias is not None:
                bound.setdefault(alias, set()).add(name)
    return frozenset(found), tuple((k, frozenset(v)) for k, v in sorted(bound.items()))

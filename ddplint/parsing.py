"""Decode and parse one file once, or say why not in a DDP999 diagnostic: the one parse the
checker and the project's module summaries share."""

from __future__ import annotations

import ast
import gc
import re
from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst

from ddplint.diagnostics import Diagnostic, Location, Severity
from ddplint.source import decode, python_syntax_error

PARSE_ERROR_CODE = "DDP999"
MAX_NESTING = 200
# A statement shorter than this cannot nest deeper than Python's parser allows (about 3,000
# levels), so LibCST's native parser, which crashes the process on deeper input, is safe on it.
LONG_STATEMENT = 2_500
_BRACKET_OR_BREAK = re.compile(r"[()\[\]{}]|(?<!\\)\n")


def parse(path: str, data: bytes) -> tuple[str, cst.Module] | Diagnostic:
    """Decode and parse, or a DDP999 diagnostic saying why not."""
    decoded = decode(data)
    if decoded.text is None:
        return file_error(path, decoded.error or "cannot decode file", 1, 1)
    too_deep = _too_deeply_nested(decoded.text)
    if too_deep is not None:
        return file_error(path, too_deep, 1, 1)
    try:
        return decoded.text, _parse_module(decoded.text)
    except cst.ParserSyntaxError as exc:
        python = python_syntax_error(decoded.text)  # Python's own place and words
        if python is not None:
            return file_error(path, f"syntax error: {python.message}", python.row, python.column)
        message = exc.message.strip().splitlines()[0] if exc.message else "invalid syntax"
        return file_error(
            path,
            f"cannot parse file: Python accepts it, LibCST (ddplint's parser) not: {message}",
            exc.raw_line,
            exc.raw_column + 1,
        )
    except (RecursionError, MemoryError, ValueError) as exc:
        return file_error(path, f"cannot parse file: {type(exc).__name__}: {exc}", 1, 1)


def _parse_module(text: str) -> cst.Module:
    """`cst.parse_module` with no automatic collection inside, the new tree then put in the
    oldest generation unscanned (with whatever else is young). A tree is hundreds of
    thousands of acyclic nodes, freed by reference counting: each young collection during
    the parse, and the two it would meet after it, walk its nodes again for nothing (about
    a quarter of the parse time). The next full collection still frees any cycle."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        with _unvalidated():
            return cst.parse_module(text)
    finally:
        gc.freeze()  # no scan, and no young collection owed: the counts start afresh
        if enabled:
            gc.enable()
        gc.unfreeze()  # into the oldest generation


@contextmanager
def _unvalidated() -> Iterator[None]:
    """Build the parser's nodes without LibCST's checks of each node's fields (about a
    sixth of a parse). They guard trees built by hand; the native parser builds only trees
    that pass them, as LibCST's own note on `CSTNode.__post_init__` says. Nodes built
    after the parse (fixes) are checked as always."""
    check = cst.CSTNode.__dict__.get("__post_init__")
    if check is None:
        yield
        return
    cst.CSTNode.__post_init__ = _no_check  # type: ignore[method-assign, assignment]
    try:
        yield
    finally:
        cst.CSTNode.__post_init__ = check  # type: ignore[method-assign]


def _no_check(node: cst.CSTNode) -> None:
    """`CSTNode.__post_init__` while the parser builds nodes (`_unvalidated`)."""


def _too_deeply_nested(text: str) -> str | None:
    """Python refuses more than 200 nested brackets and about 3,000 levels of any other nesting
    (`- - - 1`, `a if b else ...`, `lambda: lambda: ...`); LibCST's native parser crashes the
    process a little beyond that. Ask Python's own parser when a cheap scan (bracket depth,
    longest statement) says the file may be that deep."""
    if _shallow(text):
        return None
    deepest, longest = nesting(text)
    if deepest <= MAX_NESTING and longest < LONG_STATEMENT:
        return None
    try:
        compile(text, "<ddplint>", "exec", ast.PyCF_ONLY_AST)
    except (RecursionError, MemoryError) as exc:
        return f"cannot parse file: nested too deeply for Python's parser ({type(exc).__name__})"
    except (SyntaxError, ValueError) as exc:
        if deepest > MAX_NESTING:
            return f"syntax error: {getattr(exc, 'msg', None) or exc}"
    return None


def nesting(text: str) -> tuple[int, int]:
    """The deepest bracket nesting of `text` and the length of its longest statement (text
    between line breaks outside brackets; a break escaped by a backslash does not count),
    by a scan that reads brackets in strings and comments too."""
    depth = deepest = longest = 0
    start = 0
    for match in _BRACKET_OR_BREAK.finditer(text):
        token = match.group()
        if token == "\n":
            if depth <= 0:
                longest = max(longest, match.start() - start)
                start = match.end()
            continue
        depth += 1 if token in "([{" else -1
        deepest = max(deepest, depth)
    return deepest, max(longest, len(text) - start)


def _shallow(text: str) -> bool:
    """`nesting(text)` is within `MAX_NESTING` and `LONG_STATEMENT`, told a line at a time
    (a line's deepest point is at most its starting depth plus its opening brackets) in
    less than half `nesting`'s time; False where `nesting` must decide."""
    depth = start = offset = 0
    lines = text.split("\n")
    last = len(lines) - 1
    for index, line in enumerate(lines):
        opening = line.count("(") + line.count("[") + line.count("{")
        if depth + opening > MAX_NESTING:
            return False
        depth += opening - line.count(")") - line.count("]") - line.count("}")
        end = offset + len(line)  # where the line's newline is
        offset = end + 1
        if index < last and depth <= 0 and not line.endswith("\\"):
            if end - start >= LONG_STATEMENT:
                return False
            start = offset
    return len(text) - start < LONG_STATEMENT


def file_error(path: str, message: str, row: int, column: int) -> Diagnostic:
    where = Location(max(row, 1), max(column, 1))
    return Diagnostic(PARSE_ERROR_CODE, message, path, where, where, Severity.ERROR)

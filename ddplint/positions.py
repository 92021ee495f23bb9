"""Line and column of chosen nodes, as LibCST's `PositionProvider` gives them, for a fraction
of its cost.

`PositionProvider` generates the module's code once while tracking the line and column of
every token and recording a range for every node. Here code generation only counts
characters and records the offsets of the nodes asked for; offsets become lines and columns
by bisecting the source's line starts (the generated code is the source: LibCST round-trips
it exactly). Only the statements holding a wanted node are generated, each from the start of
its own lines: a statement (or a clause, a decorator) begins its logical line, found by a
scan of the source (`ddplint.logical_lines`), after the blank and comment lines it owns.
Every generated token is compared with the source there; where the scan and the tree
disagree (a count, a token), the whole module is generated instead.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import cast

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

from ddplint.engine import SemanticModel
from ddplint.logical_lines import logical_line_starts

# LibCST's own line endings (`libcst.metadata.position_provider.NEWLINE_RE`).
_NEWLINE = re.compile(r"\r\n?|\n")
_NOTHING = contextlib.nullcontext()
# Nodes that begin a logical line of their own and own the blank and comment lines above it.
_CLAUSES: tuple[type[cst.CSTNode], ...] = (
    cst.SimpleStatementLine,
    cst.If,
    cst.Else,
    cst.For,
    cst.While,
    cst.Try,
    cst.TryStar,
    cst.ExceptHandler,
    cst.ExceptStarHandler,
    cst.Finally,
    cst.With,
    cst.FunctionDef,
    cst.ClassDef,
    cst.Decorator,
    cst.Match,
    cst.MatchCase,
)
_CLAUSE_KINDS = frozenset(_CLAUSES)
_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)
_BLOCKS = frozenset({cst.IndentedBlock, cst.If, cst.Else, cst.Finally})


def node_ranges(
    model: SemanticModel, source: str, nodes: Iterable[cst.CSTNode]
) -> dict[cst.CSTNode, CodeRange]:
    """The `PositionProvider` range of each of `nodes` (nodes of `model`'s module, parsed
    from `source`)."""
    wanted = list(nodes)
    module = model.module
    text = source if module.has_trailing_newline else source + module.default_newline
    lines = _Lines(text)
    try:
        state = _clause_spans(model, text, lines, wanted)
    except _Mismatch:
        state = _module_spans(model, wanted)
    return {node: lines.range(*state.span(id(node))) for node in wanted}


def _clause_spans(
    model: SemanticModel, text: str, lines: _Lines, wanted: list[cst.CSTNode]
) -> _CountingState:
    """Spans from generating only the clauses that hold wanted nodes, each up to its first
    block: a compound statement's end is its last clause's, generated in turn. Raises
    `_Mismatch` where a wanted node lies in no clause or the source's logical lines do not
    match the tree."""
    clauses = sorted(
        (node for kind in _CLAUSES for node in model.by_type.get(kind, ())), key=_line_order(model)
    )
    starts = logical_line_starts(text, lines.starts)
    if len(starts) != len(clauses):
        raise _Mismatch
    first_line = dict(zip(map(id, clauses), starts, strict=True))
    state = _CountingState(model.module, wanted, text)
    indents: dict[int, list[str]] = {}
    todo = wanted
    while todo:
        units: dict[int, tuple[cst.CSTNode, set[int]]] = {}
        for node in todo:
            unit = _clause(model, node)
            units.setdefault(id(unit), (unit, set()))[1].add(id(node))
        for unit, inside in units.values():
            head = unit
            if type(unit) in _DEFINITIONS and unit.decorators:  # type: ignore[attr-defined]
                head = unit.decorators[0]  # type: ignore[attr-defined]
            offset = lines.starts[first_line[id(head)] - 1 - _lines_above(unit)]
            parent = model.parent(unit)
            state.start(unit, offset, inside, _indents(model, parent, indents))
            try:
                if type(unit) is cst.If and type(parent) is cst.If and parent.orelse is unit:
                    unit._codegen(state, is_elif=True)
                else:
                    unit._codegen(state)
            except _Stop:
                pass
            state.finish()
        asked = {id(node) for node in todo}
        todo = state.missing()
        if any(id(node) in asked for node in todo):  # its clause did not give it
            raise _Mismatch
    return state


def _clause(model: SemanticModel, node: cst.CSTNode) -> cst.CSTNode:
    """The innermost clause holding `node` (`node` itself if it is one)."""
    clause: cst.CSTNode | None = node
    parent = model.parent
    while clause is not None and type(clause) not in _CLAUSE_KINDS:
        clause = parent(clause)
    if clause is None:
        raise _Mismatch
    return clause


def _line_order(model: SemanticModel) -> Callable[[cst.CSTNode], tuple[int, int]]:
    """Sort key putting clauses in the order of their lines: a decorated definition's own
    line comes after its decorators."""
    position = model.position

    def key(node: cst.CSTNode) -> tuple[int, int]:
        if isinstance(node, _DEFINITIONS) and node.decorators:
            return position(node.decorators[-1]), 1
        return position(node), 0

    return key


def _lines_above(clause: cst.CSTNode) -> int:
    """How many blank and comment lines the clause's code holds above its first logical
    line."""
    above = len(getattr(clause, "leading_lines", ()))
    if isinstance(clause, _DEFINITIONS):
        if clause.decorators:
            above += len(clause.decorators[0].leading_lines)
        else:
            above += len(clause.lines_after_decorators)
    return above


def _indents(
    model: SemanticModel, node: cst.CSTNode | None, known: dict[int, list[str]]
) -> list[str]:
    """The indentation that `node` and the blocks around it add, outermost first."""
    if node is None:
        return []
    indents = known.get(id(node))
    if indents is None:
        indents = _indents(model, model.parent(node), known)
        if type(node) is cst.IndentedBlock or type(node) is cst.Match:
            own = node.indent
            indents = [*indents, model.module.default_indent if own is None else own]
        known[id(node)] = indents
    return indents


def _blocks(clause: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The blocks and clauses that `clause` generates after its own line."""
    for name in ("body", "orelse", "finalbody"):
        part = getattr(clause, name, None)
        if type(part) in _BLOCKS:
            yield cast("cst.CSTNode", part)
    yield from getattr(clause, "handlers", ())
    yield from getattr(clause, "cases", ())


def _module_spans(model: SemanticModel, wanted: list[cst.CSTNode]) -> _CountingState:
    """Spans from generating the module up to the last top-level statement holding a
    wanted node."""
    module = model.module
    items = _items(module)
    top_level = {id(item): index for index, item in enumerate(items)}
    last = -1
    for node in wanted:
        top = node
        while (parent := model.parent(top)) is not None and parent is not module:
            top = parent
        last = max(last, top_level.get(id(top), len(top_level)))
    state = _CountingState(module, wanted)
    for item in items[: last + 1]:
        item._codegen(state)
    if last >= len(items):  # a node outside the items: the module itself
        if module.has_trailing_newline and state.offset == 0:
            state.add_token(state.default_newline)
        state.spans[id(module)] = (0, state.offset)
    return state


def _items(module: cst.Module) -> list[cst.CSTNode]:
    """What `Module` generates its code from, in order."""
    return [*module.header, *module.body, *module.footer]


class _Mismatch(Exception):
    """The clause-by-clause generation cannot place the nodes: generate the module."""


class _Stop(Exception):
    """The clause being generated reached its first block (or next clause)."""


class _CountingState(CodegenState):
    """A code generation that counts characters instead of keeping them and records the
    offsets of the wanted nodes, with `PositionProvider`'s rules: a node's syntactic range
    (without the whitespace it owns), whose bounds may be those of a child, when it has one,
    else its whole code. Given the source `text`, it generates one clause at a time
    (`start`), keeps its tokens and checks them against the source (`finish`)."""

    def __init__(
        self, module: cst.Module, wanted: list[cst.CSTNode], text: str | None = None
    ) -> None:
        super().__init__(module.default_indent, module.default_newline)
        if text is not None:  # a C call per token; offsets are counted when asked
            self.add_token = self.tokens.append  # type: ignore[method-assign, assignment]
        self.wanted = {id(node): node for node in wanted}
        self.text = text
        self.spans: dict[int, tuple[int, int]] = {}  # whole code
        # Syntactic ranges: [start, child giving the start, child giving the end, end].
        self.syntactic: dict[int, list[int | None]] = {}
        self._starts: list[int] = []
        self._stops: set[int] = set()
        self._inside: set[int] = set()
        self._base = self._offset = self._counted = 0

    @property
    def offset(self) -> int:
        tokens = self.tokens
        if self._counted < len(tokens):
            self._offset += sum(map(len, itertools.islice(tokens, self._counted, None)))
            self._counted = len(tokens)
        return self._offset

    def start(self, clause: cst.CSTNode, offset: int, inside: set[int], indents: list[str]) -> None:
        """Generate `clause` next, from `offset` and within `indents`, up to its first block
        or clause, or up to the last of the wanted nodes `inside` it."""
        self.tokens.clear()
        self._base = self._offset = offset
        self._counted = 0
        self._starts = []
        self._stops = {id(child) for child in _blocks(clause)}
        self._inside = inside
        self.indent_tokens = list(indents)

    def finish(self) -> None:
        """Check the clause's tokens against the source."""
        if self.text is not None and not self.text.startswith("".join(self.tokens), self._base):
            raise _Mismatch

    def span(self, key: int) -> tuple[int, int]:
        """The start and end offsets of the wanted node of id `key`."""
        record = self.syntactic.get(key)
        if record is None:
            return self.spans[key]
        start, first, last, end = record
        if first is not None:
            start = self.span(first)[0]
        if last is not None:
            end = self.span(last)[1]
        if start is None or end is None:
            raise _Mismatch
        return start, end

    def missing(self) -> list[cst.CSTNode]:
        """Wanted nodes not generated yet (a block's range comes from its first and last
        statements, which are then wanted)."""
        found: list[cst.CSTNode] = []
        for key, node in list(self.wanted.items()):
            if key in self.spans or key in self.syntactic:
                continue
            if type(node) is cst.IndentedBlock and node.body:
                first, last = node.body[0], node.body[-1]
                self.syntactic[key] = [None, id(first), id(last), None]
                self.wanted[id(first)] = first
                self.wanted[id(last)] = last
                found += (first, last)
            else:
                found.append(node)
        return [
            node for node in found if id(node) not in self.spans and id(node) not in self.syntactic
        ]

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self._offset += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self._stops:
            raise _Stop
        if key in self.wanted:
            self._starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.wanted:
            start = self._starts.pop()
            if key not in self.spans:
                self.spans[key] = (start, self.offset)
            inside = self._inside
            if key in inside:
                inside.discard(key)
                if not inside:
                    raise _Stop

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        if id(node) not in self.wanted:
            return _NOTHING
        # The range borrows its bounds from these children: record them too.
        for child in (start_node, end_node):
            if child is not None:
                self.wanted[id(child)] = child
        return self._syntactic(node, start_node, end_node)

    @contextlib.contextmanager
    def _syntactic(
        self, node: cst.CSTNode, start_node: cst.CSTNode | None, end_node: cst.CSTNode | None
    ) -> Iterator[None]:
        record: list[int | None] = [
            self.offset,
            None if start_node is None else id(start_node),
            None if end_node is None else id(end_node),
            None,
        ]
        self.syntactic[id(node)] = record
        yield
        record[3] = self.offset


class _Lines:
    """Offsets in a text to LibCST positions (1-based line, 0-based column)."""

    def __init__(self, text: str) -> None:
        self.starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]

    def position(self, offset: int) -> CodePosition:
        line = bisect.bisect_right(self.starts, offset)
        return CodePosition(line, offset - self.starts[line - 1])

    def range(self, start: int, end: int) -> CodeRange:
        return CodeRange(self.position(start), self.position(end))

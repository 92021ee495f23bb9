"""Line and column of chosen nodes, as LibCST's `PositionProvider` gives them, for a fraction
of its cost.

`PositionProvider` generates the module's code once while tracking the line and column of
every token and recording a range for every node. Here one code generation only counts
characters and records the offsets of the nodes asked for; the offsets become lines and
columns by bisecting the source's line starts (the generated code is the source: LibCST
round-trips it exactly). The generation stops after the last top-level statement that holds
a wanted node.
"""

from __future__ import annotations

import bisect
import contextlib
import re
from collections.abc import Iterable, Iterator, Mapping

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange

# LibCST's own line endings (`libcst.metadata.position_provider.NEWLINE_RE`).
_NEWLINE = re.compile(r"\r\n?|\n")
_NOTHING = contextlib.nullcontext()


def node_ranges(
    module: cst.Module,
    source: str,
    nodes: Iterable[cst.CSTNode],
    parents: Mapping[cst.CSTNode, cst.CSTNode],
) -> dict[cst.CSTNode, CodeRange]:
    """The `PositionProvider` range of each of `nodes` (nodes of `module`, parsed from
    `source`; `parents` maps each node to its parent)."""
    wanted = list(nodes)
    top_level = {id(item): index for index, item in enumerate(_items(module))}
    last = -1
    for node in wanted:
        top = node
        while (parent := parents.get(top)) is not None and parent is not module:
            top = parent
        last = max(last, top_level.get(id(top), len(top_level)))
    state = _CountingState(module, {id(node) for node in wanted})
    items = _items(module)
    for item in items[: last + 1]:
        item._codegen(state)
    if last >= len(items):  # a node outside the items: the module itself
        if module.has_trailing_newline and state.offset == 0:
            state.add_token(state.default_newline)
        state.spans[id(module)] = (0, state.offset)
    lines = _Lines(source if module.has_trailing_newline else source + module.default_newline)
    return {node: lines.range(*state.spans[id(node)]) for node in wanted}


def _items(module: cst.Module) -> list[cst.CSTNode]:
    """What `Module` generates its code from, in order."""
    return [*module.header, *module.body, *module.footer]


class _CountingState(CodegenState):
    """A code generation that counts characters instead of keeping them and records the
    start and end offsets of the wanted nodes, with `PositionProvider`'s rules: a node's
    syntactic range (without the whitespace it owns) when it has one, else its whole code."""

    def __init__(self, module: cst.Module, wanted: set[int]) -> None:
        super().__init__(module.default_indent, module.default_newline)
        self.offset = 0
        self.wanted = wanted
        self.spans: dict[int, tuple[int, int]] = {}
        self._starts: list[int] = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.offset += len(token)

    def add_token(self, value: str) -> None:
        self.offset += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            self._starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.wanted:
            start = self._starts.pop()
            if key not in self.spans:
                self.spans[key] = (start, self.offset)

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
                self.wanted.add(id(child))
        return self._syntactic(node, start_node, end_node)

    @contextlib.contextmanager
    def _syntactic(
        self, node: cst.CSTNode, start_node: cst.CSTNode | None, end_node: cst.CSTNode | None
    ) -> Iterator[None]:
        start = self.offset
        try:
            yield
        finally:
            if start_node is not None:
                start = self.spans[id(start_node)][0]
            end = self.spans[id(end_node)][1] if end_node is not None else self.offset
            self.spans[id(node)] = (start, end)


class _Lines:
    """Offsets in a text to LibCST positions (1-based line, 0-based column)."""

    def __init__(self, text: str) -> None:
        self._starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]

    def position(self, offset: int) -> CodePosition:
        line = bisect.bisect_right(self._starts, offset)
        return CodePosition(line, offset - self._starts[line - 1])

    def range(self, start: int, end: int) -> CodeRange:
        return CodeRange(self.position(start), self.position(end))

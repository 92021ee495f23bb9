"""Read-only mappings from the nodes of one module to values, keyed by node identity.

A LibCST node hashes through a Python method (`CSTNode.__hash__`, `id(self)`): a dict
keyed by nodes pays a Python call per look-up, and four of them (parents, order, end of
subtree, frame) one per node again when the sweep fills them. The semantic model keeps one
index instead, `id(node)` -> pre-order position, filled by C code alone, and one list of
values per table. The model holds every node of its module, so no other live object has
the id of one of them: a node of another tree is simply not found.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TypeVar

import libcst as cst

V = TypeVar("V")


class NodeTable(Mapping[cst.CSTNode, V]):
    """`node -> values[index[id(node)]]` for the nodes of `index`; a value None is no entry
    (the module has no parent)."""

    __slots__ = ("_index", "_nodes", "_values")

    def __init__(
        self, index: dict[int, int], nodes: list[cst.CSTNode], values: Sequence[V | None]
    ) -> None:
        self._index = index
        self._nodes = nodes
        self._values = values

    def __getitem__(self, node: cst.CSTNode) -> V:
        position = self._index.get(id(node))
        value = None if position is None else self._values[position]
        if value is None:
            raise KeyError(node)
        return value

    def get(self, node: cst.CSTNode, default: V | None = None) -> V | None:  # type: ignore[override]
        position = self._index.get(id(node))
        value = None if position is None else self._values[position]
        return default if value is None else value

    def __contains__(self, node: object) -> bool:
        position = self._index.get(id(node))
        return position is not None and self._values[position] is not None

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return (n for n, v in zip(self._nodes, self._values, strict=True) if v is not None)

    def __len__(self) -> int:
        return sum(v is not None for v in self._values)

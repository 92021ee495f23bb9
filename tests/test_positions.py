"""`ddplint.positions` gives the ranges LibCST's `PositionProvider` gives, for any set of nodes."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from ddplint import positions
from ddplint.engine import SemanticModel
from ddplint.logical_lines import logical_line_starts
from ddplint.positions import node_ranges

CORPUS = sorted((Path(__file__).parent.parent / "corpus").rglob("*.py"))
_NOT_CODE = {
    tokenize.NL,
    tokenize.COMMENT,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.NEWLINE,
    tokenize.ENDMARKER,
}

EDGE_CASES = {
    "no trailing newline": "import torch\nx = torch.zeros(1)",
    "crlf": "import os\r\nif os.environ:\r\n    rank = 0\r\n",
    "crlf, no trailing newline": "def f(a):\r\n    return a",
    "lone carriage returns": "a = 1\rb = (\r  2)\r",
    "tabs and wide characters": "def f():\n\tname = 'ü€😀'; other = name\n\treturn name\n",
    "header, decorators, comments, footer": (
        "#!/usr/bin/env python\n# header\n\n@dec  # one\n# between\n@other(1)\n"
        "def f(\n    x,  # x\n    y=2,\n):\n    # leading\n    if x:\n        pass\n"
        "        # block footer\n    # dedented\n    return x\n\n# module footer\n"
    ),
    "semicolons and continuation": "a = 1; b = 2 \\\n    + 3\nc = [\n    1,\n]\n",
    "strings": 'x = f"{a!r:>{w}}" "tail"\ny = """\nmulti\n"""\n',
    "match and try": (
        "match p:\n    case [x, y] if x > y:\n        pass\n    case _:\n        pass\n"
        "try:\n    a()\nexcept (A, B) as e:\n    raise\nelse:\n    b()\nfinally:\n    c()\n"
    ),
    "classes and async": (
        "class C(Base, metaclass=M):\n    '''doc'''\n    x: int = 1\n\n"
        "    async def run(self):\n        async with a as b, c:\n            await b\n"
    ),
    "comments only": "# nothing here\n",
    "empty": "",
}


def _provider_ranges(module: cst.Module) -> dict[cst.CSTNode, object]:
    return dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))


def _check(source: str, one_at_a_time: bool) -> None:
    module = cst.parse_module(source)
    expected = _provider_ranges(module)
    model = SemanticModel(module)
    parents = model.parents
    # Every node at once: whitespace, punctuation and all.
    assert node_ranges(model, source, expected) == expected
    # Statements without their children: ranges that borrow a bound from a child not asked
    # for (a block's end) are still right; one at a time, the generation stops early.
    statements = [n for n in parents if isinstance(n, (cst.BaseStatement, cst.BaseSuite))]
    assert node_ranges(model, source, statements) == {n: expected[n] for n in statements}
    for node in statements if one_at_a_time else ():
        assert node_ranges(model, source, [node]) == {node: expected[node]}


@pytest.mark.parametrize("name", EDGE_CASES)
def test_ranges_equal_position_provider_on_edge_cases(name: str) -> None:
    _check(EDGE_CASES[name], one_at_a_time=True)


def test_ranges_equal_position_provider_on_the_corpus() -> None:
    assert len(CORPUS) > 200
    for path in CORPUS:
        _check(path.read_text(encoding="utf-8"), one_at_a_time=False)


def test_module_range_and_nodes_outside_the_statements() -> None:
    source = "# header\nx = 1\n# footer\n"
    module = cst.parse_module(source)
    expected = _provider_ranges(module)
    ranges = node_ranges(SemanticModel(module), source, [module, module.header[0]])
    assert ranges == {module: expected[module], module.header[0]: expected[module.header[0]]}


@pytest.mark.parametrize("name", [n for n in EDGE_CASES if n not in ("comments only", "empty")])
def test_clauses_alone_place_nodes_on_edge_cases(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Statements, clauses and calls are placed from the clauses holding them: the module is
    not generated as a whole (which would fail here), and the ranges are still exact."""
    source = EDGE_CASES[name]
    module = cst.parse_module(source)
    expected = _provider_ranges(module)
    model = SemanticModel(module)

    def whole_module(*args: object) -> None:
        raise AssertionError("generated the whole module")

    monkeypatch.setattr(positions, "_module_spans", whole_module)
    kinds = (cst.BaseStatement, cst.BaseSuite, cst.Call, cst.Else, cst.ExceptHandler, cst.Name)
    wanted = [n for n in model.nodes if isinstance(n, kinds)]
    assert wanted
    assert node_ranges(model, source, wanted) == {n: expected[n] for n in wanted}


def test_a_misread_line_scan_falls_back_to_the_whole_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the scan's lines do not hold the clauses' tokens (here two lines swapped), the
    tokens do not match the source there and the whole module is generated: ranges exact."""
    source = "a = 1\nb = 22\nc = (\n    333)\n"
    module = cst.parse_module(source)
    expected = _provider_ranges(module)
    model = SemanticModel(module)
    monkeypatch.setattr(positions, "logical_line_starts", lambda text, starts: [1, 3, 2])
    statements = list(module.body)
    assert node_ranges(model, source, statements) == {n: expected[n] for n in statements}


def test_logical_line_starts_agree_with_pythons_tokenizer_on_the_corpus() -> None:
    for path in CORPUS:
        source = path.read_text(encoding="utf-8")
        starts = [0, *(m.end() for m in re.finditer(r"\r\n?|\n", source))]
        expected, first = [], True
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if first and token.type not in _NOT_CODE:
                expected.append(token.start[0])
                first = False
            elif token.type == tokenize.NEWLINE:
                first = True
        assert logical_line_starts(source, starts) == expected, path

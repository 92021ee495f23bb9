"""The text scan of imports (`ddplint.project.import_scan`) finds every import a parse
finds: the project index leaves out, unparsed, a module the scan does not reach."""

from __future__ import annotations

from pathlib import Path

import libcst
import pytest

from ddplint.context import FileContext
from ddplint.project.import_scan import imported_by_name, scanned_bindings, scanned_imports

HERE = Path(__file__).resolve().parent
SOURCES = sorted(
    [*(HERE.parent / "corpus" / "lint").rglob("*.py"), *(HERE.parent / "ddplint").rglob("*.py")]
)


def _parsed_imports(text: str) -> set[str]:
    imports = FileContext("m.py", text, libcst.parse_module(text)).imports
    return {*imports.bindings.values(), *imports.modules}


def test_the_scan_holds_every_parsed_import_of_the_corpus_and_of_ddplint() -> None:
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        missing = _parsed_imports(text) - scanned_imports(text)
        assert not missing, (path, missing)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("from a.b import c as d, e\n", {"a.b", "a.b.c", "a.b.e"}),
        (
            "from . import x\nfrom ..p import (\n    y,  # z\n    w,\n)\n",
            {".", ".x", "..p", "..p.y", "..p.w"},
        ),
        ("import a.b as c, d\n", {"a.b", "a", "d"}),
        (
            "def f():\n    import torch.distributed as dist; from os import path\n",
            {"torch.distributed", "torch", "os", "os.path"},
        ),
        ("x = y.import_z\nfrom_a = 1\nobj.from_b(1)\nreimport = 2\n", set()),
        ("if x:from q import r\n", {"q", "q.r"}),
        ("from \\\n  s import t\n", {"s", "s.t"}),
    ],
)
def test_edges(text: str, expected: set[str]) -> None:
    assert set(scanned_imports(text)) == expected
    assert _parsed_imports(text) <= set(scanned_imports(text))


def test_bindings_name_what_each_local_name_may_stand_for() -> None:
    text = "import a.b as c\nimport d.e\nfrom f import g, h as i\n"
    assert scanned_bindings(text) == {
        "a": frozenset({"a"}),  # a superset: `import a.b as c` binds only `c`
        "c": frozenset({"a.b"}),
        "d": frozenset({"d"}),
        "g": frozenset({"f.g"}),
        "h": frozenset({"f.h"}),
        "i": frozenset({"f.h"}),
    }


@pytest.mark.parametrize(
    ("text", "whole", "packages"),
    [
        ("m = importlib.import_module('train.metrics')", {"train.metrics"}, set()),
        ("module = import_module('data.' + para.dataset)", set(), {"data"}),
        ('net = import_module(f"models.{cfg.arch}").build()', set(), {"models"}),
        ('net = import_module(f"models.resnet{depth}")', set(), {"models"}),
        ("m = import_module('.' + name, package='plugins')", set(), set()),
        ("m = my.import_module('x')  # another object's method", set(), set()),
        ("print('import_module(\"a.b\")')", {"a.b"}, set()),  # a superset: strings count
    ],
)
def test_modules_imported_by_a_name_in_a_string(
    text: str, whole: set[str], packages: set[str]
) -> None:
    assert imported_by_name(text) == (frozenset(whole), frozenset(packages))


@pytest.mark.parametrize(
    ("text", "whole"),
    [
        ("m = __import__('pkg.mod')", {"pkg.mod"}),
        ("m = importlib.__import__('pkg.mod')", {"pkg.mod"}),
        ("m = x.__import__('pkg.mod')", set()),
        ("m = my_import_module('pkg.mod')", set()),
        ("m = importlib.import_module( 'pkg.mod' )", {"pkg.mod"}),
    ],
)
def test_only_the_import_functions_themselves_count(text: str, whole: set[str]) -> None:
    assert imported_by_name(text)[0] == frozenset(whole)

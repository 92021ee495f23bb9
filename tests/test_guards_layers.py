"""The guard's folders are layers: record -> hooks -> protocol -> judge -> agent. A module imports
only from its own layer or the ones below it, counting imports inside functions and under
`TYPE_CHECKING`; `compare` stands beside them: it records in the user's process with the lowest
two (record, hooks), and no layer imports it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_import_cycles import _graph

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("record", "hooks", "protocol", "judge", "agent")
BESIDE = "compare"
BESIDE_USES = ("record", "hooks")


def _layer(module: str) -> str | None:
    """The layer (or `compare`) of a module of guards; None for the package's entry modules."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in (*LAYERS, BESIDE) else None


def _allowed(source: str | None, target: str | None) -> bool:
    if source is None:  # the entry modules, guards/__init__ and __main__, may import any layer
        return True
    if target is None:  # no layer imports an entry module (importing guards installs the guard)
        return False
    if source == BESIDE:
        return target in (BESIDE, *BESIDE_USES)
    if target == BESIDE:
        return False
    return LAYERS.index(target) <= LAYERS.index(source)


def _violations(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{module} ({_layer(module)}) imports {target} ({_layer(target)})"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if not _allowed(_layer(module), _layer(target))
    ]


def test_every_guards_module_sits_in_a_layer() -> None:
    loose = [m for m in _graph(ROOT, "guards") if _layer(m) is None]
    assert sorted(loose) == ["guards", "guards.__main__"]


def test_no_layer_imports_a_higher_one() -> None:
    assert not _violations(_graph(ROOT, "guards")), "\n".join(_violations(_graph(ROOT, "guards")))


@pytest.mark.parametrize(
    ("layer", "body", "wrong"),
    [
        ("hooks", "def f():\n    from ..agent import runtime\n", True),  # in a function
        ("hooks", "if TYPE_CHECKING:\n    from guards.judge import v\n", True),
        ("hooks", "from ..compare import records\n", True),
        ("hooks", "from .. import started_by_torchrun\n", True),  # installs the guard
        ("hooks", "from ..record import ledger\n", False),
        ("compare", "from ..agent import runtime\n", True),
        ("compare", "from ..hooks import ledger\n", False),
    ],
)
def test_the_check_sees_every_kind_of_import(
    tmp_path: Path, layer: str, body: str, wrong: bool
) -> None:
    (tmp_path / "guards").mkdir()
    (tmp_path / "guards" / "__init__.py").write_text("")
    for folder in (*LAYERS, BESIDE):
        (tmp_path / "guards" / folder).mkdir()
        for name in ("__init__", "runtime", "v", "records", "ledger"):
            (tmp_path / "guards" / folder / f"{name}.py").write_text("")
    (tmp_path / "guards" / layer / "probe.py").write_text(body)
    found = [v for v in _violations(_graph(tmp_path, "guards")) if "probe" in v]
    assert bool(found) is wrong, found

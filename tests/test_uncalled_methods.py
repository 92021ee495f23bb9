"""A public method no code of the project names is of unknown liveness where no framework
can call it as a hook: its class derives only from `object` and plain classes of the same
file (`class KFoldTrainer(Trainer)`, `class Trainer(object)`). A base from elsewhere (a
`nn.Module`, a Lightning module) may call it by name, so it stays live."""

from __future__ import annotations

import libcst as cst
import pytest

from ddplint.checker import livenesses
from ddplint.context import FileContext
from ddplint.domain.liveness import Liveness
from ddplint.project.queries import Project

TRAINERS = """\
import torch


class Trainer({base}):
    def fit(self, loader):
        for batch in loader:
            self.step(batch)

    def step(self, batch):
        pass


class KFoldTrainer(Trainer):
    def run_kfold(self, folds):
        for loader in folds:
            self.fit(loader)
        torch.save(self.model.state_dict(), "fold.pt")


if __name__ == "__main__":
    KFoldTrainer().fit(torch.load("data.pt"))
"""


def _liveness(write, base: str, method: str) -> Liveness:
    write("pyproject.toml", '[project]\nname = "kfold"\nversion = "0.1"\n')
    path = write("train.py", TRAINERS.format(base=base))
    source = path.read_text()
    ctx = FileContext(str(path), source, cst.parse_module(source), Project.load([str(path)]))
    func = next(
        f
        for f in ctx.nodes_of(cst.FunctionDef)
        if f.name.value == method  # type: ignore[attr-defined]
    )
    return livenesses(ctx).function(func)  # type: ignore[arg-type]


@pytest.mark.parametrize("base", ["object", ""])
def test_an_unnamed_method_of_a_subclass_of_a_plain_class_may_never_run(write, base):
    assert _liveness(write, base, "run_kfold") is Liveness.UNKNOWN


@pytest.mark.parametrize("base", ["object", "torch.nn.Module"])
def test_named_methods_are_live(write, base):
    assert _liveness(write, base, "fit") is Liveness.LIVE
    assert _liveness(write, base, "step") is Liveness.LIVE


def test_a_base_from_elsewhere_may_call_it_by_name(write):
    assert _liveness(write, "torch.nn.Module", "run_kfold") is Liveness.LIVE

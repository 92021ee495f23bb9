"""Loaders only evaluated, or kept by an object whose called methods never read them, are
not trained on (DDP002, DDP035); a file importing a name its project module does not
bind stops at its imports (liveness: its findings are unproven)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from ddplint.cli import main

RUNNER = """\
class Runner:
    def __init__(self, model, train_loader, test_loader):
        self.model = model
        self.train_loader = train_loader
        self.test_loader = test_loader
        self.device = "cuda"

    def train(self, epochs):
        for epoch in range(epochs):
            for x, y in self.train_loader:
                self.model(x).mean().backward()

    def evaluate(self):
        return self._score(self.test_loader)

    def _score(self, loader):
        return sum(float(self.model(x).mean()) for x, _ in loader)
"""

SCRIPT = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

from {module} import Runner


def main(model, train_set, test_set, checkpoints):
    dist.init_process_group("nccl")
    train_sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=32, sampler=train_sampler)
    test_loader = DataLoader(test_set, batch_size=32, sampler=DistributedSampler(test_set))
    for path in checkpoints:
        model.load_state_dict(torch.load(path, map_location="cpu"))
        runner = Runner(model, train_loader, test_loader)
        print(runner.{method}(), runner.device)


if __name__ == "__main__":
    main(None, None, None, [])
"""


def findings(tmp_path: Path, capsys, files: dict[str, str], code: str) -> list[dict]:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json", "--preview"]
    main([*args, "--select", code, str(tmp_path / "eval.py")])
    return json.loads(capsys.readouterr().out)


def test_a_loader_kept_by_an_object_whose_called_methods_never_read_it(tmp_path, capsys):
    script = SCRIPT.format(module="runner", method="evaluate")
    files = {"runner.py": RUNNER, "eval.py": script}
    assert findings(tmp_path, capsys, files, "DDP002") == []


def test_the_same_loader_read_by_the_method_called_is_reported(tmp_path, capsys):
    script = SCRIPT.format(module="runner", method="train")
    files = {"runner.py": RUNNER, "eval.py": script}
    (found,) = findings(tmp_path, capsys, files, "DDP002")
    assert not found["unproven"]


def test_a_method_the_class_body_does_not_define_keeps_the_finding(tmp_path, capsys):
    runner = RUNNER.replace("class Runner:", "class Runner(BaseRunner):")
    runner = "from base import BaseRunner\n\n\n" + runner
    base = "class BaseRunner:\n    def fit(self):\n        return self.train_loader\n"
    script = SCRIPT.format(module="runner", method="fit")
    files = {"runner.py": runner, "base.py": base, "eval.py": script}
    assert len(findings(tmp_path, capsys, files, "DDP002")) == 1


def test_a_name_its_project_module_does_not_bind_makes_the_file_unproven(tmp_path, capsys):
    renamed = RUNNER.replace("class Runner:", "class DistRunner:")
    script = SCRIPT.format(module="runner", method="train")
    files = {"runner.py": renamed, "eval.py": script}
    (found,) = findings(tmp_path, capsys, files, "DDP002")
    assert found["unproven"]
    assert "`Runner` from `runner`" in found["message"]
    assert "stops at its imports" in found["message"]


def test_the_stdlib_parse_of_a_project_text_prints_no_warnings(recwarn):
    import warnings

    from ddplint.domain.text_trees import stdlib_tree

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would raise here
        tree = stdlib_tree("x = [0x1for y in range(3)]\nz = '\\d'\n")
    assert tree is not None
    assert stdlib_tree("def broken(:\n") is None
    assert len(recwarn) == 0


def test_a_method_the_class_lacks_keeps_the_finding(tmp_path, capsys):
    # `runner.show()` raises AttributeError, or a subclass out of sight defines it: what
    # it reads is unknown, so the loader may be trained on.
    script = SCRIPT.format(module="runner", method="show")
    files = {"runner.py": RUNNER, "eval.py": script}
    assert len(findings(tmp_path, capsys, files, "DDP002")) == 1

"""A module of an application that no file of the project imports, and that does nothing
when run by itself, is a leftover (a trainer replaced by another, a copy kept beside the
one in use): its findings are unproven, shown by `--preview` with the reason. Whatever may
import it keeps it live: an import of any form, a module path in a string, a computed
import, a settings or command file naming it, a notebook, packaging, or code of its own
that runs."""

from __future__ import annotations

import os
from pathlib import Path

import libcst as cst
import pytest

from ddplint.domain.scripts import may_run_as_program
from ddplint.project.unimported import never_imported

TRAINER = """\
import torch
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self, model, local_rank):
        self.model = DistributedDataParallel(model.to("cuda:0"), device_ids=[local_rank])

    def fit(self, loader, optimizer):
        for inputs, targets in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(self.model(inputs), targets).backward()
            optimizer.step()
"""

TRAIN = """\
import os

import torch
import torch.distributed as dist

{imports}


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    config = {{"trainer": {{"lr": 1e-3}}}}
    trainer = Trainer(torch.nn.Linear(4, 4), local_rank)
    trainer.fit([], torch.optim.SGD(trainer.model.parameters(), lr=config["trainer"]["lr"]))
    {extra}


if __name__ == "__main__":
    main()
"""

LEFTOVER = "no file of the project imports this module"


def _project(
    root: Path, imports: str = "from core.flow_trainer import Trainer", extra: str = ""
) -> Path:
    (root / ".git").mkdir()
    (root / "core").mkdir()
    (root / "core" / "flow_trainer.py").write_text(TRAINER)
    (root / "core" / "trainer.py").write_text(TRAINER)
    (root / "train.py").write_text(TRAIN.format(imports=imports, extra=extra))
    return root / "core" / "trainer.py"


def _findings(cli, root: Path) -> dict[str, list[dict]]:
    result = cli("check", "--no-cache", "--preview", "--output-format", "json", str(root))
    found: dict[str, list[dict]] = {}
    for row in result.json():
        found.setdefault(os.path.relpath(row["filename"], root), []).append(row)
    return found


def test_a_module_nothing_imports_has_unproven_findings(cli, tmp_path):
    _project(tmp_path)
    found = _findings(cli, tmp_path)
    [used] = found[os.path.join("core", "flow_trainer.py")]
    [leftover] = found[os.path.join("core", "trainer.py")]
    assert used["code"] == leftover["code"] == "DDP001"
    assert not used["unproven"] and LEFTOVER not in used["message"]
    assert leftover["unproven"] and LEFTOVER in leftover["message"]


def test_the_default_run_leaves_the_leftover_out(cli, tmp_path):
    _project(tmp_path)
    result = cli("check", "--no-cache", "--output-format", "json", str(tmp_path))
    assert [os.path.basename(r["filename"]) for r in result.json()] == ["flow_trainer.py"]


@pytest.mark.parametrize(
    "imports",
    [
        "from core.trainer import Trainer",
        "import core.trainer as trainer_module\nfrom core.flow_trainer import Trainer",
        "from core import (\n    flow_trainer,\n    trainer,\n)\nTrainer = trainer.Trainer",
        "import importlib\nTrainer = importlib.import_module('core.trainer').Trainer",
        "import importlib\nTrainer = getattr(importlib.import_module(os.environ['TRAINER']), 'T')",
        "from core.flow_trainer import Trainer\nSPEC = 'core.trainer.Trainer'",
        "from core.flow_trainer import Trainer\nSOURCE = 'core/trainer.py'",
    ],
)
def test_any_import_or_module_path_keeps_it_live(tmp_path, imports, monkeypatch):
    module = _project(tmp_path, imports)
    monkeypatch.chdir(tmp_path)
    assert not never_imported(str(module))


def test_a_dictionary_key_or_a_variable_of_its_name_is_no_import(tmp_path, monkeypatch):
    module = _project(tmp_path, extra='trainer.model.train()\n    print(config["trainer"])')
    monkeypatch.chdir(tmp_path)
    assert never_imported(str(module))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("configs/train.yaml", "model:\n  target: core.trainer.Trainer\n"),
        ("run.sh", "python -m core.trainer --epochs 3\n"),
        ("demo.ipynb", "{}"),
    ],
)
def test_settings_commands_and_notebooks_may_import_it(tmp_path, name, text, monkeypatch):
    module = _project(tmp_path)
    (tmp_path / name).parent.mkdir(exist_ok=True)
    (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    assert not never_imported(str(module))


def test_a_run_below_a_project_without_markers_decides_nothing(cli, tmp_path, monkeypatch):
    _project(tmp_path)
    (tmp_path / ".git").rmdir()
    monkeypatch.chdir(tmp_path / "core")  # the importer, train.py, lies above
    result = cli("check", "--no-cache", "--preview", "--output-format", "json", "trainer.py")
    [finding] = result.json()
    assert not finding["unproven"]


def test_a_packaged_project_exports_its_modules(cli, tmp_path):
    _project(tmp_path)
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='app')\n")
    [leftover] = _findings(cli, tmp_path)[os.path.join("core", "trainer.py")]
    assert not leftover["unproven"]


@pytest.mark.parametrize(
    ("source", "runs"),
    [
        ("import os\n\n\ndef f():\n    pass\n\n\nclass A:\n    pass\n\n\nX = 1\n", False),
        ("import logging\nlog = logging.getLogger(__name__)\n", False),
        ("try:\n    import apex\nexcept ImportError:\n    apex = None\n", False),
        ('"""A module."""\nimport torch\n', False),
        ("def main():\n    pass\n\n\nmain()\n", True),
        ("import argparse\nparser = argparse.ArgumentParser()\nargs = parser.parse_args()\n", True),
        ("def main():\n    return 0\n\n\nstatus = main()\n", True),
        ("for i in range(3):\n    pass\n", True),
        ("if True:\n    pass\nelif False:\n    print(1)\n", True),
        ("try:\n    import x\nexcept ImportError:\n    x = None\nfinally:\n    go()\n", True),
        ('if __name__ == "__main__":\n    pass\n', True),
    ],
)
def test_what_may_run_as_a_program(source, runs):
    assert may_run_as_program(cst.parse_module(source)) is runs

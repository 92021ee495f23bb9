"""The project index parses only the modules a question needs: a module that names no
distributed API and imports none that does is never parsed, whatever the checked file
calls in it. Counted through the parser, never timed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ddplint import runner
from ddplint.cache import Cache

TRAIN = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import models
import utils


def main():
    dist.init_process_group("nccl")
    model = DDP(models.Net(16))
    for step in range(10):
        loss = model(torch.randn(4, 16)).sum()
        loss.backward()
    if dist.get_rank() == 0:
        utils.log_stats(model)


if __name__ == "__main__":
    main()
"""
UTILS = """\
import torch.distributed as dist


def log_stats(model):
    dist.barrier()
    print(model)
"""
MODELS = """\
import torch.nn as nn

from layers import Block


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.block = Block(width)

    def forward(self, x):
        return self.block(x)
"""
LAYERS = """\
import torch.nn as nn


class Block(nn.Linear):
    def __init__(self, width):
        super().__init__(width, width)
"""


def _run(files: dict[str, str], root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    (root / "pyproject.toml").write_text("")
    for name, text in files.items():
        (root / name).write_text(text)
    parsed: list[str] = []
    parse: Callable[..., object] = runner.parse

    def counting(path: str, data: bytes) -> object:
        parsed.append(Path(path).name)
        return parse(path, data)

    monkeypatch.setattr(runner, "parse", counting)
    monkeypatch.chdir(root)
    result = runner.run([root / "train.py"], lambda _: {"DDP010"}, Cache(None), jobs=1)
    return sorted(parsed), [(Path(d.path).name, d.code, d.start.row) for d in result.diagnostics]


def test_modules_that_cannot_matter_are_not_parsed(tmp_path, monkeypatch):
    files = {"train.py": TRAIN, "utils.py": UTILS, "models.py": MODELS, "layers.py": LAYERS}
    parsed, findings = _run(files, tmp_path, monkeypatch)
    # The collective in the helper called under the rank gate is found through utils.py ...
    assert findings == [("train.py", "DDP010", 16)]
    # ... and models.py, which train.py calls, and layers.py, which it imports, are never
    # parsed: neither names a distributed API nor imports a module that does.
    assert parsed == ["train.py", "utils.py"]


def test_a_module_that_may_matter_is_parsed(tmp_path, monkeypatch):
    """The same project with a collective in the layer that the model builds: the model
    module now leads to a distributed name, so the question is answered from its parse."""
    layers = LAYERS.replace(
        "import torch.nn as nn", "import torch.distributed as dist\nimport torch.nn as nn"
    )
    files = {"train.py": TRAIN, "utils.py": UTILS, "models.py": MODELS, "layers.py": layers}
    parsed, findings = _run(files, tmp_path, monkeypatch)
    assert findings == [("train.py", "DDP010", 16)]
    assert "models.py" in parsed

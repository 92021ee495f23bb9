"""The project index parses only the modules a question needs: a module that names no
distributed API and imports none that does is never parsed, whatever the checked file
calls in it. Counted through the parser, never timed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ddplint import runner
from ddplint.cache import Cache
from ddplint.project.module_index import ModuleIndex

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


def _run(
    files: dict[str, str],
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    passed: tuple[str, ...] = ("train.py",),
    codes: frozenset[str] = frozenset({"DDP010"}),
) -> tuple[list[str], list[tuple[str, str, int]]]:
    """Check `passed` in a project of `files`: the files parsed, and the findings."""
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
    result = runner.run([root / p for p in passed], lambda _: set(codes), Cache(None), jobs=1)
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
    module now leads to a collective, so the question is answered from its parse."""
    layers = LAYERS.replace(
        "import torch.nn as nn", "import torch.distributed as dist\nimport torch.nn as nn"
    ).replace(
        "super().__init__(width, width)",
        "super().__init__(width, width)\n        dist.broadcast(self.weight, 0)",
    )
    files = {"train.py": TRAIN, "utils.py": UTILS, "models.py": MODELS, "layers.py": layers}
    parsed, findings = _run(files, tmp_path, monkeypatch)
    assert findings == [("train.py", "DDP010", 16)]
    assert "models.py" in parsed


# Questions about a module's callers, checkpoint loading and the process group parse only
# the modules whose text can change the answer (`ModuleIndex.lookup_ends`, `text_tests`).
CALLER = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import loss
import models


def main():
    dist.init_process_group("nccl")
    model = DDP(models.Net(16))
    for step in range(10):
        out = model(torch.randn(4, 16))
        value = loss.scaled(out, dist.get_world_size())
        value.backward()


if __name__ == "__main__":
    main()
"""
LOSS = """\
import torch


def scaled(out, world_size):
    weight = torch.ones(1, device="cuda:0")
    return (out * weight).sum() / world_size
"""
LAYERED = """\
import torch
import torch.nn as nn

# Parameter names as the wrapper writes them: "module.weight", "module.bias".
PREFIXED = ("module.weight", "module.bias")


class Net(nn.Linear):
    def __init__(self, width):
        super().__init__(width, width)
"""
LOADER = """\


def load(model, path):
    state = {k.replace("module.", ""): v for k, v in torch.load(path).items()}
    model.load_state_dict(state)
"""
MAIN = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import models


def main():
    dist.init_process_group("nccl")
    model = DDP(models.Net(16))
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), "model.pt")


if __name__ == "__main__":
    main()
"""


def test_callers_are_found_without_parsing_what_they_call_elsewhere(tmp_path, monkeypatch):
    """loss.py runs on every rank because train.py calls it; deciding so looks up only
    train.py's calls that may lead into loss.py, not `models.Net`."""
    files = {"train.py": CALLER, "loss.py": LOSS, "models.py": LAYERED}
    parsed, findings = _run(
        files, tmp_path, monkeypatch, ("train.py", "loss.py"), frozenset({"DDP001"})
    )
    assert findings == [("loss.py", "DDP001", 5)]
    assert parsed == ["loss.py", "train.py"]


def test_a_module_that_only_mentions_the_prefix_is_not_parsed(tmp_path, monkeypatch):
    """A `"module."` string that no prefix test receives cannot strip the prefix."""
    files = {"main.py": MAIN, "models.py": LAYERED}
    parsed, findings = _run(files, tmp_path, monkeypatch, ("main.py",), frozenset({"DDP006"}))
    assert findings == [("main.py", "DDP006", 12)]
    assert parsed == ["main.py"]


@pytest.mark.parametrize(
    "stripped",
    [
        'k.replace("module.", "")',
        'k.split("module.")[-1]',
        'k.partition("module.")[2]',
        're.sub(r"^module\\.", "", k)',
    ],
)
def test_a_module_that_strips_the_prefix_is_parsed(tmp_path, monkeypatch, stripped):
    # Every form the parse accepts (`checkpoints.strips_module_prefix`) passes the text
    # test first: a form the text test missed left the module unread.
    loader = "import re\n" + LOADER.replace('k.replace("module.", "")', stripped)
    files = {"main.py": MAIN, "models.py": LAYERED + loader}
    parsed, findings = _run(files, tmp_path, monkeypatch, ("main.py",), frozenset({"DDP006"}))
    assert findings == []
    assert parsed == ["main.py", "models.py"]


GATED = """\
import torch.distributed as dist

import data
import loss


def main(args):
    dist.init_process_group("nccl")
    if dist.get_rank() == 0:
        data.make_loader(args.distributed)
    loss.scaled(1.0, dist.get_world_size())


if __name__ == "__main__":
    main(None)
"""
DATA = """\
import torch


def make_loader(distributed):
    options = {"shuffle": not distributed, "pin_memory": torch.cuda.is_available()}
    return options


def main():
    print(make_loader(False))


if __name__ == "__main__":
    main()
"""


def test_words_that_only_look_distributed_do_not_parse_a_module(tmp_path, monkeypatch):
    """data.py names `distributed` (a parameter) and `main`, but no name for
    `torch.distributed` and no main-process helper: whether the gated call
    issues a collective, and whether loss.py runs on every rank, need no parse of it."""
    loss = LOSS.replace("import torch\n", "import torch\n\nimport data\n").replace(
        "    return", "    data.main()\n    return"
    )
    files = {"train.py": GATED, "data.py": DATA, "loss.py": loss}
    codes = frozenset({"DDP001", "DDP010"})
    parsed, findings = _run(files, tmp_path, monkeypatch, ("train.py", "loss.py"), codes)
    assert findings == [("loss.py", "DDP001", 7)]
    assert parsed == ["loss.py", "train.py"]
    dist = DATA.replace("import torch\n", "import torch\nimport torch.distributed as dist\n")
    files["data.py"] = dist.replace("    return options", "    dist.barrier()\n    return options")
    parsed, findings = _run(files, tmp_path, monkeypatch, ("train.py", "loss.py"), codes)
    assert ("train.py", "DDP010", 10) in findings
    assert "data.py" in parsed


# A helper's own facts (the files it loads or writes) are asked only of modules whose text
# can hold them: a call that resolves to `torch.load` or `torch.save` spells the word `load`
# or `save` whole and names `torch` (`queries._calling`).
LOADING = """\
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import ckpt


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(torch.nn.Linear(8, 8).cuda(), device_ids=[local_rank])
    if os.path.exists("latest.pth"):
        ckpt.restore(model.module, "latest.pth")
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), "latest.pth")
"""
LOADS = """\
import torch


def restore(model, path):
    model.load_state_dict(torch.load(path))
"""
# Words that contain `load` but no call of `torch.load`.
LOADS_NOTHING = """\
import torch


class Frozen(torch.nn.Module):
    def _load_from_state_dict(self, *args):
        pass


def restore(model, path):
    model.load_state_dict(torch.zeros(1), strict=False)
"""

SAVING = """\
import torch.distributed as dist

import ckpt


def main():
    dist.init_process_group("nccl")
    for epoch in range(3):
        if dist.get_rank() == 0:
            ckpt.write({"epoch": epoch}, "last.pt")
"""
# `save` as a word, but no `torch`: no call here can resolve to `torch.save`.
SAVES_WITH_PICKLE = """\
import pickle


def write(state, path):
    # save the state with pickle
    with open(path, "wb") as handle:
        pickle.dump(state, handle)
"""


def test_a_helper_that_loads_is_parsed(tmp_path, monkeypatch):
    files = {"train.py": LOADING, "ckpt.py": LOADS}
    parsed, findings = _run(files, tmp_path, monkeypatch, codes=frozenset({"DDP033"}))
    assert findings == [("train.py", "DDP033", 15)]
    assert parsed == ["ckpt.py", "train.py"]


def test_a_helper_whose_words_only_contain_load_is_not_parsed(tmp_path, monkeypatch):
    files = {"train.py": LOADING, "ckpt.py": LOADS_NOTHING}
    parsed, findings = _run(files, tmp_path, monkeypatch, codes=frozenset({"DDP033"}))
    assert findings == []
    assert parsed == ["train.py"]


def test_a_helper_that_cannot_call_torch_save_is_not_parsed(tmp_path, monkeypatch):
    files = {"train.py": SAVING, "ckpt.py": SAVES_WITH_PICKLE}
    parsed, findings = _run(files, tmp_path, monkeypatch, codes=frozenset({"DDP014"}))
    assert findings == []
    assert parsed == ["train.py"]


RESUMING = """\
import os

import torch
import torch.distributed as dist

import engine


def main(resume):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = torch.nn.Linear(4, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if resume:
        state = torch.load(resume)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    engine.fit(model, optimizer)
"""
ENGINE = """\
import ckpt_io
import metrics


def fit(model, optimizer):
    for epoch in range(3):
        metrics.log(epoch)
        ckpt_io.write(model, optimizer, epoch)
"""
CKPT_IO = """\
import torch


def write(model, optimizer, epoch):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    torch.save(state, f"ckpt_{epoch}.pt")
"""
METRICS = """\
def log(epoch):
    print("epoch", epoch)
"""


def test_checkpoint_formats_come_from_the_modules_that_save_only(tmp_path, monkeypatch):
    """The resume reads the format a module two imports away writes from GPU state: that
    module is parsed to say so; the module between and the one beside it, which call no
    `torch.save`, are not."""
    files = {"train.py": RESUMING, "engine.py": ENGINE, "ckpt_io.py": CKPT_IO}
    files["metrics.py"] = METRICS
    parsed, findings = _run(files, tmp_path, monkeypatch, codes=frozenset({"DDP033"}))
    assert findings == [("train.py", "DDP033", 15)]
    assert parsed == ["ckpt_io.py", "train.py"]


RANK_ONLY_HELPER = """\
import torch.distributed as dist


def log_stats(model):
    if dist.get_rank() == 0:
        print(model)
"""


def test_a_helper_that_only_asks_the_rank_is_not_parsed_for_collectives(tmp_path, monkeypatch):
    """A module that names `torch.distributed` but writes no collective's name cannot issue
    one: the question "does `utils.log_stats` issue a collective" is answered from its text."""
    files = {"train.py": TRAIN, "utils.py": RANK_ONLY_HELPER}
    parsed, findings = _run(files, tmp_path, monkeypatch)
    assert parsed == ["train.py"]
    assert findings == []


DEVICE_HELPERS = {
    "plain": "import torch\n\ndef setup(i):\n    torch.cuda.set_device(i)\n",
    "context": "import torch\n\ndef setup(i):\n    return torch.cuda.device(i)\n",
    "from-import": "from torch.cuda import device\n\ndef setup(i):\n    return device(i)\n",
    "module alias": "import torch.cuda as tc\n\ndef setup(i):\n    return tc.device(i)\n",
    "torch alias": "import torch as th\n\ndef setup(i):\n    return th.cuda.device(i)\n",
    "accelerator": "import torch\n\ndef setup(i):\n    torch.accelerator.set_device_index(i)\n",
}


@pytest.mark.parametrize("helper", sorted(DEVICE_HELPERS))
def test_every_spelling_of_a_device_setter_passes_its_text_test(helper: str) -> None:
    """The text test that spares parses for "does this helper set the device" holds on each
    way a module can write a setter (`device_setters.sets_device`)."""
    from ddplint.context import FileContext
    from ddplint.domain.device_setters import sets_device
    from ddplint.parsing import parse
    from ddplint.project.text_tests import NamesDeviceSetter

    text = DEVICE_HELPERS[helper]
    parsed = parse("helper.py", text.encode())
    assert isinstance(parsed, tuple)
    ctx = FileContext("helper.py", *parsed)
    assert any(sets_device(ctx, call) for call in ctx.calls)
    assert NamesDeviceSetter().search(text) is True


def test_a_module_that_only_moves_tensors_to_cuda_names_no_device_setter() -> None:
    from ddplint.project.text_tests import NamesDeviceSetter

    text = (
        "import torch\n\ndef move(x):\n    if torch.cuda.is_available():\n        return x.cuda()\n"
    )
    assert NamesDeviceSetter().search(text) is None


# DDP040's question "does the script, or a module it imports, name LOCAL_RANK" scans the
# imports outward, nearest first, and stops at the first module that does.
LAUNCHED = """\
import argparse

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import models
from common.launch import apply_launcher_environment


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)
    args = parser.parse_args()
    apply_launcher_environment(args)
    torch.cuda.set_device(args.local_rank)
    dist.init_process_group("nccl")
    model = DDP(models.Net(16).cuda(), device_ids=[args.local_rank])
    model(torch.randn(4, 16, device="cuda")).sum().backward()


if __name__ == "__main__":
    main()
"""
LAUNCH = """\
from common.env import launcher_values


def apply_launcher_environment(args):
    for name, value in launcher_values().items():
        setattr(args, name, value)
"""
ENV = """\
import os


def launcher_values():
    return {"local_rank": int(os.environ["LOCAL_RANK"])} if "LOCAL_RANK" in os.environ else {}
"""
CHAIN = {
    "models.py": "import layers\n\nNet = layers.Net\n",
    "layers.py": "import blocks\n\nNet = blocks.Net\n",
    "blocks.py": "import ops\n\nNet = ops.Net\n",
    "ops.py": "import torch.nn as nn\n\nNet = nn.Linear\n",
}


@pytest.mark.parametrize("named", [True, False])
def test_the_local_rank_search_stops_at_the_nearest_module_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named: bool
) -> None:
    """With LOCAL_RANK read two imports away, the modules three and four imports deep
    along another branch are never scanned; without it, every one is, and DDP040 reports
    the option torchrun never passes."""
    scanned: list[str] = []
    scan = ModuleIndex._scan

    def counting(index: ModuleIndex, path: str) -> frozenset[str]:
        scanned.append(Path(path).name)
        return scan(index, path)

    monkeypatch.setattr(ModuleIndex, "_scan", counting)
    (tmp_path / "common").mkdir()
    (tmp_path / "README.md").write_text("torchrun --nproc_per_node=8 train.py\n")
    env = ENV if named else ENV.replace("LOCAL_RANK", "LOCAL_GPU")
    files = {"train.py": LAUNCHED, "common/__init__.py": "", "common/launch.py": LAUNCH}
    files |= {"common/env.py": env, **CHAIN}
    _, findings = _run(files, tmp_path, monkeypatch, codes=frozenset({"DDP040"}))
    if named:
        assert findings == []
        assert not {"blocks.py", "ops.py"} & set(scanned)
    else:
        assert findings == [("train.py", "DDP040", 13)]
        assert {"blocks.py", "ops.py"} <= set(scanned)


FLAG_GATED = """\
import torch.distributed as dist

import flags


def main():
    dist.init_process_group("nccl")
    if flags.enabled():
        dist.barrier()
"""
# A switch read from the environment: no rank, no main process, no spawned worker.
SWITCH = """\
import os


def enabled():
    return os.environ.get("FAST_PATH") == "1"
"""
MAIN_TEST = """\
import torch.distributed as dist


def enabled():
    return dist.get_rank() == 0
"""


def test_a_helper_that_cannot_test_the_rank_is_not_parsed(tmp_path, monkeypatch):
    """Whether `flags.enabled()` is a rank test is the helper's own fact: a module whose
    text names no rank, main process or spawned worker cannot return one."""
    parsed, findings = _run({"train.py": FLAG_GATED, "flags.py": SWITCH}, tmp_path, monkeypatch)
    assert findings == []
    assert parsed == ["train.py"]


def test_a_helper_returning_a_rank_test_is_parsed(tmp_path, monkeypatch):
    parsed, findings = _run({"train.py": FLAG_GATED, "flags.py": MAIN_TEST}, tmp_path, monkeypatch)
    assert findings == [("train.py", "DDP010", 9)]
    assert "flags.py" in parsed


SAVING_THROUGH_A_METHOD = """\
import torch.distributed as dist

import tasks


def main():
    dist.init_process_group("nccl")
    task = tasks.Task()
    for epoch in range(3):
        if dist.get_rank() == 0:
            task.finish({"epoch": epoch}, "last.pt")
"""
# The class's module imports one that saves, but its own text calls no `torch.save`.
TASKS = """\
import ckpt


class Task:
    def finish(self, state, path):
        print("done", path, state)

    def keep(self, state, path):
        ckpt.write(state, path)
"""
CKPT = """\
import torch


def write(state, path):
    torch.save(state, path)
"""


def test_the_class_of_a_method_that_cannot_save_is_not_parsed(tmp_path, monkeypatch):
    files = {"train.py": SAVING_THROUGH_A_METHOD, "tasks.py": TASKS, "ckpt.py": CKPT}
    parsed, findings = _run(files, tmp_path, monkeypatch, codes=frozenset({"DDP014"}))
    assert findings == []
    assert parsed == ["train.py"]

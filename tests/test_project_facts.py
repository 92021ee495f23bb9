"""Findings never depend on which files are passed: facts about sibling modules come from
the files on disk, and cached results follow changes in the modules a file imports."""

from __future__ import annotations

import os
from pathlib import Path

import libcst as cst
import pytest
from conftest import LINT_CORPUS, corpus_case_project

from ddplint.context import FileContext
from ddplint.project.queries import Project

PROJECTS = sorted(
    p.name for p in LINT_CORPUS.iterdir() if p.is_dir() and len(list(p.rglob("*.py"))) > 1
)

UTILS = """\
import torch
import torch.distributed as dist


def is_main_process():
    return dist.get_rank() == 0


def save_and_sync(state, path):
    torch.save(state, path)
    dist.barrier()
"""

MAIN = """\
import torch.distributed as dist
from utils import is_main_process, save_and_sync


def train(model, epochs):
    dist.init_process_group("nccl")
    for epoch in range(epochs):
        if is_main_process():
            save_and_sync(model.module.state_dict(), "last.pt")
"""


def findings(cli, *args: object) -> list[tuple[str, int, str]]:
    result = cli("check", "--exit-zero", "--output-format", "json", *args)
    assert result.code == 0, result.err
    return sorted(
        (os.path.realpath(d["filename"]), d["location"]["row"], d["code"]) for d in result.json()
    )


def test_corpus_has_multi_file_projects():
    assert len(PROJECTS) >= 5


@pytest.mark.parametrize("case", PROJECTS)
def test_project_findings_equal_file_by_file(cli, case, tmp_path):
    """Each file of a corpus project alone gets the findings it gets in the whole run."""
    project = corpus_case_project(case, tmp_path) / case
    whole = findings(cli, "--no-cache", project)
    alone = sorted(
        finding
        for path in sorted(project.rglob("*.py"))
        for finding in findings(cli, "--no-cache", path)
    )
    assert alone == whole


def test_helper_in_unpassed_sibling(cli, write, tmp_path):
    """The issue's case: `check main.py` alone reports the hang `check main.py utils.py` does."""
    write("pyproject.toml", "")
    write("utils.py", UTILS)
    main = write("main.py", MAIN)
    expected = [(os.path.realpath(main), 9, "DDP010")]
    assert findings(cli, "--no-cache", "--select", "DDP010", main) == expected
    assert findings(cli, "--no-cache", "--select", "DDP010", tmp_path) == expected


def test_transitive_helper_in_a_package(cli, write, tmp_path):
    """`main` -> `pkg.checkpoint.save` (re-exported by `pkg/__init__`) -> `pkg.sync.wait`,
    which issues the barrier: three modules, none passed but main."""
    write("pyproject.toml", "")
    write("pkg/__init__.py", "from .checkpoint import save\n")
    write(
        "pkg/checkpoint.py",
        """\
        import torch
        from .sync import wait

        def save(state, path):
            torch.save(state, path)
            wait()
        """,
    )
    write("pkg/sync.py", "import torch.distributed as dist\n\ndef wait():\n    dist.barrier()\n")
    main = write(
        "main.py",
        """\
        import torch.distributed as dist
        from pkg import save

        def train(model):
            if dist.get_rank() == 0:
                save(model.module.state_dict(), "last.pt")
        """,
    )
    assert findings(cli, "--no-cache", "--select", "DDP010", main) == [
        (os.path.realpath(main), 6, "DDP010")
    ]


def test_cached_result_follows_a_change_in_a_sibling(cli, write, tmp_path, monkeypatch):
    """A cached result of main.py must not survive a change in utils.py that changes it."""
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    utils = write("utils.py", UTILS)
    main = write("main.py", MAIN)
    assert findings(cli, "--select", "DDP010", main) == [(os.path.realpath(main), 9, "DDP010")]
    assert (tmp_path / ".ddplint_cache").is_dir()
    utils.write_text(UTILS.replace("    dist.barrier()\n", "    print(path)\n"))
    assert findings(cli, "--select", "DDP010", main) == []
    utils.write_text(UTILS)
    assert findings(cli, "--select", "DDP010", main) == [(os.path.realpath(main), 9, "DDP010")]


def test_a_sibling_appearing_later_counts(cli, write, tmp_path, monkeypatch):
    """A module that did not exist when main.py was first checked is read once it does."""
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    main = write("main.py", MAIN)
    assert findings(cli, "--select", "DDP010", main) == []
    write("utils.py", UTILS)
    assert findings(cli, "--select", "DDP010", main) == [(os.path.realpath(main), 9, "DDP010")]


def test_modules_outside_the_project_are_not_read(write, tmp_path):
    """Imports resolve up to the project root (the nearest pyproject.toml / .git), not
    beyond it, and only imported modules are summarised."""
    write("utils.py", UTILS)  # above the project: not part of it
    write("proj/pyproject.toml", "")
    write("proj/unrelated.py", UTILS)
    main = write("proj/main.py", MAIN)
    project = Project.load([str(main)])
    assert sorted(Path(p).name for p in project.summaries) == ["main.py"]
    write("proj/utils.py", UTILS)
    project = Project.load([str(main)])
    assert sorted(Path(p).name for p in project.summaries) == ["main.py", "utils.py"]


def test_each_module_is_summarised_once(write, tmp_path):
    """A diamond of imports reads each module once, and only when asked (listing the
    project's modules asks for all of them)."""
    write("pyproject.toml", "")
    write("a.py", "import c\n")
    write("b.py", "import c\n")
    write("c.py", "import torch.distributed as dist\n")
    main = write("main.py", "import a\nimport b\n")
    read: list[str] = []

    def summarize(path: str):
        from ddplint.project.summaries import summarize_path

        read.append(Path(path).name)
        return summarize_path(path)

    project = Project.load([str(main)], summarize)
    assert read == []
    assert sorted(Path(p).name for p in project.summaries) == ["a.py", "b.py", "c.py", "main.py"]
    assert sorted(read) == ["a.py", "b.py", "c.py", "main.py"]


AMP = """\
import torch.distributed as dist


def prepare(model):
    return model.half()


def agree(scale):
    dist.all_reduce(scale)
    return scale
"""

LOSS = """\
import torch


class BoxLoss:
    def __call__(self, predictions, targets):
        if targets.numel() == 0:
            targets = torch.zeros((0, 6), device="cuda:0")
        return predictions.sum() - targets.sum()  # world_size plays no part
"""

TRAINER = """\
import torch.distributed as dist
from loss import BoxLoss


def train(batches):
    dist.init_process_group("nccl")
    criterion = BoxLoss()
    return [criterion(p, t) for p, t in batches]
"""


def test_importing_a_module_with_distributed_code_is_not_running_it(write):
    """A script is distributed when it calls project code that uses the process group, not
    when it merely imports a module that holds some (`from apex import amp`)."""
    write("pyproject.toml", "")
    write("amp.py", AMP)
    single = write("single.py", "import amp\n\nmodel = amp.prepare(object())\n")
    multi = write("multi.py", "import amp\n\nscale = amp.agree(1.0)\n")
    project = Project.load([str(single), str(multi)])
    assert not project.runs_distributed_at(str(single))
    assert project.runs_distributed_at(str(multi))


def test_a_module_a_distributed_file_calls_runs_distributed(write):
    """The loss module a trainer calls runs on every rank, whatever files the run names;
    a module nothing distributed calls does not."""
    write("pyproject.toml", "")
    loss = write("loss.py", LOSS)
    write("trainer.py", TRAINER)
    write("plot.py", "import torch\n\n# world_size: one\nx = torch.zeros(1, device='cuda:0')\n")
    project = Project.load([str(loss)])
    assert project.runs_distributed_at(str(loss))
    assert not Project.load([str(loss.parent / "plot.py")]).runs_distributed_at(
        str(loss.parent / "plot.py")
    )


def test_cached_result_follows_a_change_in_a_caller(cli, write, tmp_path, monkeypatch):
    """loss.py's cached result must not survive the trainer ceasing to call it."""
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    loss = write("loss.py", LOSS)
    trainer = write("trainer.py", TRAINER)
    expected = [(os.path.realpath(loss), 7, "DDP001")]
    assert findings(cli, "--select", "DDP001", loss) == expected
    trainer.write_text(TRAINER.replace("criterion = BoxLoss()", "criterion = None"))
    assert findings(cli, "--select", "DDP001", loss) == []
    trainer.write_text(TRAINER)
    assert findings(cli, "--select", "DDP001", loss) == expected


KIT = """\
import torch.distributed as dist


class Runner:
    def __init__(self, lr):
        self.lr = lr

    def average(self, tensor):
        dist.all_reduce(tensor)
        return tensor

    def scaled(self, tensor):
        return tensor * self.lr


class Group:
    def __init__(self):
        dist.init_process_group("gloo")


def get_rank():
    return dist.get_rank() if dist.is_initialized() else 0


class Saver:
    def __init__(self, folder, save_on_rank=0):
        if get_rank() == save_on_rank:
            self.folder = folder


class Ranked:
    def __init__(self):
        self.rank = dist.get_rank()
"""


@pytest.mark.parametrize(
    ("script", "distributed"),
    [
        ("import kit\n\nrunner = kit.Runner(0.1)\nrunner.average(1.0)\n", True),
        ("from kit import Group\n\ngroup = Group()\n", True),
        ("import kit\n\nrunner = kit.Runner(0.1)\nrunner.scaled(1.0)\n", False),
        ("from kit import Saver\n\nSaver('out')\n", False),
        ("from kit import Ranked\n\nRanked()\n", True),
        ("from kit import get_rank\n\nprint(get_rank())\n", True),
    ],
)
def test_project_classes_link_to_their_construction_and_methods(write, script, distributed):
    """Calling a project class runs its `__init__`; a method called on an object a project
    class made runs that method: either makes the script distributed when it uses the
    process group, and neither does when it does not. A constructor that only asks the
    rank through a helper (`get_rank()`, which answers 0 without a process group) is
    rank-aware and works in one process; calling the helper itself, or a constructor
    asking torch.distributed (which needs a group), makes the script distributed."""
    write("pyproject.toml", "")
    write("kit.py", KIT)
    path = write("script.py", script)
    assert Project.load([str(path)]).runs_distributed_at(str(path)) is distributed


def test_a_method_of_an_object_a_project_helper_returns(write):
    """`strategy = get_strategy(args)` (re-exported by a package, built from a class of a
    nested package inside the helper) then `strategy.setup()`: the method that runs is the
    class's; `run()`, which the class does not define, leads nowhere."""
    write("pyproject.toml", "")
    write("kit/__init__.py", "from .factory import get_strategy\n")
    write(
        "kit/factory.py",
        """\
        def get_strategy(args):
            from kit.backends import EnvStrategy

            strategy = EnvStrategy(args)
            return strategy
        """,
    )
    write("kit/backends/__init__.py", "from .env import EnvStrategy\n")
    write(
        "kit/backends/env.py",
        """\
        import os

        class EnvStrategy:
            def __init__(self, args):
                self.args = args

            def setup(self):
                return int(os.environ.get("LOCAL_RANK", "0"))
        """,
    )
    main = write(
        "main.py",
        "from kit import get_strategy\n\ns = get_strategy(None)\ns.setup()\ns.run()\n",
    )
    project = Project.load([str(main)])
    source = main.read_text()
    ctx = FileContext(str(main), source, cst.parse_module(source), project)
    setup, run = (c for c in ctx.calls if isinstance(c.func, cst.Attribute))
    assert project.helper_reads_local_rank(ctx, setup)
    assert not project.helper_reads_local_rank(ctx, run)


@pytest.mark.parametrize(
    ("source", "distributed"),
    [
        ("import torch.distributed.checkpoint as dcp\ndcp.load(sd, checkpoint_id=p)\n", False),
        ("import torch.distributed as dist\nif dist.is_initialized():\n    x = 1\n", False),
        ("import torch.distributed as dist\ndist.checkpoint.save(sd, checkpoint_id=p)\n", False),
        ("import torch.distributed as dist\ndist.barrier()\n", True),
        ("import torch.distributed as dist\nop = dist.ReduceOp.SUM\n", True),
        ("import torch.distributed as dist  # left from a template\n", False),
        ("from torch.nn.parallel import DistributedDataParallel as DDP\n", False),
        ("from torch.nn.parallel import DistributedDataParallel as DDP\nm = DDP(m)\n", True),
    ],
)
def test_which_torch_distributed_uses_make_code_distributed(write, source, distributed):
    """Distributed checkpointing and mode queries work without a process group; a
    collective or a process-group name counts, an import nothing reads (a template's
    leftover) does not: it only makes the file's findings unproven."""
    write("pyproject.toml", "")
    script = write("script.py", source)
    assert Project.load([str(script)]).summaries[str(script)].distributed is distributed


def test_a_test_module_runs_in_the_pytest_process(write):
    """A pytest module calling distributed project code from tests that show no sign of a
    job runs in one process; a test named for a distributed run does not."""
    write("pyproject.toml", "")
    write("amp.py", AMP)
    calls = "import amp\n\n\ndef {name}():\n    assert amp.agree(1.0) == 1.0\n"
    single = write("test_single.py", calls.format(name="test_agree"))
    launched = write("test_launched.py", calls.format(name="test_distrib_agree"))
    script = write("agree_script.py", calls.format(name="test_agree"))
    project = Project.load([str(single), str(launched), str(script)])
    assert not project.runs_distributed_at(str(single))
    assert project.runs_distributed_at(str(launched))
    assert project.runs_distributed_at(str(script))


SCOPES = """\
import os

import torch


def namespace():
    return getattr(torch, "cuda")


class RankScope:
    def __enter__(self):
        namespace().set_device(int(os.environ["LOCAL_RANK"]))
        return self

    def __exit__(self, *exc):
        return False


class Quiet:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
"""

WORKER = """\
import torch
import torch.distributed as dist

from scopes import {scope}


def work():
    with {scope}():
        dist.init_process_group("nccl")
        return torch.ones(2, device="cuda")
"""


def test_a_with_of_a_project_class_that_sets_the_device(cli, write, tmp_path, monkeypatch):
    """Entering `RankScope` sets this rank's device (through a device module a helper
    returns), entering `Quiet` does not, and only `__enter__` of the class entered counts;
    a cached result follows a change of the sibling's `__enter__`."""
    monkeypatch.chdir(tmp_path)
    write("pyproject.toml", "")
    scopes = write("scopes.py", SCOPES)
    scoped = write("scoped.py", WORKER.format(scope="RankScope"))
    quiet = write("quiet.py", WORKER.format(scope="Quiet"))
    assert findings(cli, "--select", "DDP020", scoped) == []
    assert findings(cli, "--select", "DDP020", quiet) == [(os.path.realpath(quiet), 10, "DDP020")]
    scopes.write_text(SCOPES.replace("namespace().set_device", "print"))
    assert findings(cli, "--select", "DDP020", scoped) == [(os.path.realpath(scoped), 10, "DDP020")]


BASELINE = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

device = torch.device("cuda:0")
model = torch.nn.Linear(4, 4).to(device)
"""


def test_an_import_nothing_reads_makes_findings_unproven(write, cli):
    """A single-GPU baseline left with a template's DDP imports: nothing proves it runs in
    a process group, so its findings are shown only under --preview, saying why."""
    write("pyproject.toml", "")
    write("ddp_train.py", "import torch.distributed as dist\ndist.init_process_group('nccl')\n")
    baseline = write("baseline.py", BASELINE)
    assert cli("check", "--no-cache", baseline).code == 0
    result = cli("check", "--no-cache", "--preview", "--output-format", "json", baseline)
    (finding,) = result.json()
    assert finding["code"] == "DDP001" and finding["unproven"]
    assert "imports torch.distributed or DDP names it never uses" in finding["message"]


def test_a_baseline_module_distributed_code_calls_is_proven(write, cli):
    """The same module, called from a script that starts the process group, runs on every
    rank: its finding is proven."""
    write("pyproject.toml", "")
    baseline = write("baseline.py", BASELINE.replace("model = ", "def build():\n    return "))
    write(
        "ddp_train.py",
        "import torch.distributed as dist\nfrom baseline import build\n"
        "dist.init_process_group('nccl')\nmodel = build()\n",
    )
    result = cli("check", "--no-cache", "--output-format", "json", baseline)
    (finding,) = result.json()
    assert finding["code"] == "DDP001" and not finding["unproven"]


LAYER = """\
import torch

device = torch.device("cuda:0")


class ParallelLinear(torch.nn.Module):
    def __init__(self, width, process_group=None):
        super().__init__()
        self.world_size = 1 if process_group is None else process_group.size()
        if process_group is not None:
            self.rank = process_group.rank()
        self.linear = torch.nn.Linear(width, width // self.world_size).to(device)
"""


def test_a_layer_asking_the_rank_of_a_group_only_a_caller_passes_is_unproven(write, cli):
    """A tensor-parallel layer asks `process_group.rank()` only when a caller passes a
    group; a single-process script builds it without one: nothing proves the layer's
    module runs in a process group."""
    write("pyproject.toml", "")
    layer = write("layer.py", LAYER)
    write("train.py", "from layer import ParallelLinear\n\nmodel = ParallelLinear(8).cuda()\n")
    result = cli("check", "--no-cache", "--preview", "--output-format", "json", layer)
    (finding,) = result.json()
    assert finding["code"] == "DDP001" and finding["unproven"]
    assert "only when a caller passes one" in finding["message"]


def test_a_rank_query_without_a_group_test_is_proven(write, cli):
    """The same module asking the rank unconditionally uses the process group: distributed
    code, proven once a job that runs it is in sight (`job_membership.in_job`)."""
    write("pyproject.toml", "")
    layer = write("layer.py", LAYER.replace("if process_group is not None:", "if width > 0:"))
    result = cli("check", "--no-cache", "--preview", "--output-format", "json", layer)
    (finding,) = result.json()
    assert finding["code"] == "DDP001" and "only when a caller passes one" not in finding["message"]
    assert "nothing in sight starts a job" in finding["message"]
    write(
        "train.py",
        "import torch.distributed as dist\nfrom layer import ParallelLinear\n\n"
        "dist.init_process_group('nccl')\nmodel = ParallelLinear(8)\n",
    )
    result = cli("check", "--no-cache", "--output-format", "json", layer)
    (finding,) = result.json()
    assert finding["code"] == "DDP001" and not finding["unproven"]

"""The project is the tree under its root: a package named like a library is still the
project's own, a helper is "sure" to issue a collective only when it does on every call,
and checkpoint loading elsewhere is read from module summaries."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from ddplint.context import FileContext
from ddplint.parsing import parse
from ddplint.project.finder import ModuleFinder
from ddplint.project.queries import Project, loaded_elsewhere
from ddplint.project.summaries import ModuleSummary, summarize_path
from ddplint.project_files import ProjectFiles

HELPERS = """\
import torch.distributed as dist


def gated(t, sharded):
    if sharded:
        dist.broadcast(t, src=0)
    return t


def always(t):
    if dist.is_initialized():
        dist.all_reduce(t)
    return t


def through_gated(t, sharded):
    return gated(t, sharded)
"""

MAIN = """\
import torch.distributed as dist
from helpers import always, gated, through_gated


def evaluate(t, sharded):
    dist.init_process_group("gloo")
    gated(t, sharded)
    always(t)
    through_gated(t, sharded)
"""


def context(path: Path, project: Project | None = None) -> FileContext:
    parsed = parse(str(path), path.read_bytes())
    assert isinstance(parsed, tuple)
    return FileContext(str(path), *parsed, project)


def calls_by_name(ctx: FileContext) -> dict[str, cst.Call]:
    return {c.func.value: c for c in ctx.calls if isinstance(c.func, cst.Name)}


def test_a_package_named_like_a_library_is_the_projects_own(write, tmp_path):
    write("pyproject.toml", "")
    helper = write("timm/utils/__init__.py", "from .dist import init\n")
    write("timm/__init__.py", "")
    write("timm/utils/dist.py", "import os\n\ndef init():\n    return os.environ['LOCAL_RANK']\n")
    main = write("train.py", "from timm import utils\nutils.init()\n")
    assert ModuleFinder().module_path(str(main), "timm.utils") == str(helper)
    assert ModuleFinder().module_path(str(main), "torch.distributed") is None
    names = sorted(
        Path(p).relative_to(tmp_path).as_posix() for p in Project.load([str(main)]).summaries
    )
    assert names == [
        "timm/__init__.py",
        "timm/utils/__init__.py",
        "timm/utils/dist.py",
        "train.py",
    ]


def test_only_a_helper_that_always_issues_is_sure_to(write):
    write("pyproject.toml", "")
    write("helpers.py", HELPERS)
    main = write("main.py", MAIN)
    project = Project.load([str(main)])
    ctx = context(main, project)
    calls = calls_by_name(ctx)
    may = {n: project.helper_issues_collective(ctx, c) for n, c in calls.items()}
    sure = {n: project.helper_surely_issues_collective(ctx, c) for n, c in calls.items()}
    assert may == {"gated": True, "always": True, "through_gated": True}
    # a mode check (`if dist.is_initialized():`) is the same on every rank; a flag is not known
    assert sure == {"gated": False, "always": True, "through_gated": False}


def test_checkpoint_loading_elsewhere_comes_from_the_summaries(write, monkeypatch):
    write("pyproject.toml", "")
    main = write("main.py", "import torch\ntorch.save({}, 'a.pt')\n")
    other = write("evaluate.py", "import torch\nstate = torch.load('a.pt')\n")
    quiet = write("plots.py", "import matplotlib\n")
    assert loaded_elsewhere(str(main))
    summary = summarize_path(str(other))
    assert summary is not None and summary.loads_checkpoint
    read: list[str] = []
    original = ProjectFiles.text

    def text(self: ProjectFiles, path: str) -> str | None:
        read.append(Path(path).name)
        return original(self, path)

    monkeypatch.setattr(ProjectFiles, "text", text)
    silent = ModuleSummary(False, (), (), ())
    project = Project({str(main): silent, str(other): silent, str(quiet): silent})
    assert not project.loaded_elsewhere(str(main))  # the summaries say nobody loads
    assert read == []  # and no file was read for it
    assert Project({str(main): silent}).loaded_elsewhere(str(main))  # the others from text
    assert sorted(read) == ["evaluate.py"]


METERS = """\
import torch
import torch.distributed as dist


def is_dist_initialized():
    return dist.is_available() and dist.is_initialized()


class Meter:
    def synchronize(self):
        if not is_dist_initialized():
            return
        totals = torch.tensor([self.total, self.count])
        dist.all_reduce(totals)


class Timer:
    def reset(self):
        self.start = 0.0


class Gauge:
    def reset(self):
        dist.barrier()
"""

METER_MAIN = """\
import torch.distributed as dist
from meters import Gauge, Meter, Timer


def log_epoch():
    dist.init_process_group("gloo")
    meter, timer, gauge = Meter(), Timer(), Gauge()
    meter.synchronize()
    timer.reset()
    gauge.reset()
"""


def test_the_sole_method_of_its_name_answers_for_a_project_object(write):
    write("pyproject.toml", "")
    write("meters.py", METERS)
    main = write("main.py", METER_MAIN)
    project = Project.load([str(main)])
    ctx = context(main, project)
    calls = {ctx.code(c): c for c in ctx.calls if isinstance(c.func, cst.Attribute)}
    # `synchronize` is Meter's alone, and `is_dist_initialized()` is a mode check by its
    # name: it issues on every call of a distributed run
    assert project.helper_surely_issues_collective(ctx, calls["meter.synchronize()"])
    # two classes define `reset`: each object's own class answers for it
    assert not project.helper_issues_collective(ctx, calls["timer.reset()"])
    assert project.helper_surely_issues_collective(ctx, calls["gauge.reset()"])

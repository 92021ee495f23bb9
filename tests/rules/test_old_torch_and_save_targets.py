"""Holdout classes H9 and H10 and the omnivore miss (issue 8): the old launcher on a branch
taken only on a torch without `torchrun` (DDP022), a save the process exits right after
(DDP014), and checkpoints written through a file object opened for writing, also while
walking a list of paths (DDP014)."""

from __future__ import annotations

import textwrap

import libcst as cst

from ddplint.api import lint_source
from ddplint.context import FileContext
from ddplint.domain import OldTorch, domain_of

HEADER = """\
import os
import subprocess
import sys
from distutils.version import LooseVersion

import torch
import torch.distributed as dist
from packaging import version
from packaging.version import Version
"""


def rows(body: str, code: str) -> list[int]:
    source = HEADER + textwrap.dedent(body)
    offset = HEADER.count("\n")
    return [d.start.row - offset for d in lint_source(source, select=[code])]


def messages(body: str, code: str) -> list[str]:
    return [d.message for d in lint_source(HEADER + textwrap.dedent(body), select=[code])]


def old_torch_of_launch_strings(body: str) -> list[OldTorch | None]:
    source = HEADER + textwrap.dedent(body)
    ctx = FileContext("t.py", source, cst.parse_module(source))
    strings = [n for n in ctx.nodes_of(cst.SimpleString) if "launch" in n.value]
    return [domain_of(ctx).versions.old_torch(n) for n in strings]


LAUNCH = 'subprocess.run("python -m torch.distributed.launch --use_env train.py", shell=True)'


def test_the_launcher_as_the_fallback_for_a_torch_without_torchrun_is_left_alone():
    body = f"""
    TORCH_VERSION = tuple(int(x) for x in torch.__version__.split(".")[:2])
    _before_torchrun = LooseVersion(torch.__version__) < LooseVersion("1.10")

    def command(fp):
        if Version(torch.__version__) >= Version("1.10.0"):
            return ["torchrun", fp]
        else:
            return [sys.executable, "-m", "torch.distributed.launch", "--use_env", fp]

    def by_tuple():
        if TORCH_VERSION < (1, 10):
            {LAUNCH}

    def by_flag():
        if _before_torchrun:
            {LAUNCH}

    def by_negation():
        if not version.parse(torch.__version__) >= version.parse("1.9"):
            {LAUNCH}

    def mirrored():
        if "1.10" > torch.__version__:
            {LAUNCH}
    """
    assert rows(body, "DDP022") == []


def test_the_launcher_where_torchrun_exists_is_still_reported():
    body = f"""
    def below_two():
        if Version(torch.__version__) < Version("2.0"):  # 1.10 .. 1.13 have torchrun
            {LAUNCH}

    def minor_number_alone():
        if int(torch.__version__.split(".")[1]) < 10:  # not a version
            {LAUNCH}

    def after_the_old_torch_left():
        if Version(torch.__version__) < Version("1.10"):
            return
        {LAUNCH}

    def new_torch_branch():
        if Version(torch.__version__) >= Version("1.10"):
            {LAUNCH}
    """
    assert rows(body, "DDP022") == [4, 8, 13, 17]


def test_version_bounds_are_read_as_versions():
    body = """
    if torch.__version__ <= "1.9.1":
        cmd = "python -m torch.distributed.launch a.py"
    if Version(torch.__version__) == Version("1.8.0"):
        cmd = "python -m torch.distributed.launch b.py"
    if (1, 12) > TORCH:
        cmd = "python -m torch.distributed.launch c.py"
    """
    assert old_torch_of_launch_strings(body) == [
        OldTorch((1, 9, 1), True),
        OldTorch((1, 8), True),
        None,  # `TORCH` is not known to hold the torch version
    ]
    assert OldTorch((1, 9, 1), True).before((1, 10))
    assert OldTorch((1, 10), False).before((1, 10))
    assert not OldTorch((1, 10), True).before((1, 10))


def test_a_save_the_process_exits_right_after_runs_once():
    body = """
    def report(stats, steps, rank):
        for step in range(steps):
            stats["step"].append(step)
            if len(stats["step"]) == 100:
                if rank == 0:
                    torch.save(stats, "speed_stats.pt")
                quit()

    def report_and_raise(stats, steps):
        for step in range(steps):
            if step > 10:
                torch.save(stats, "stats.pt"); raise SystemExit(0)
    """
    assert rows(body, "DDP014") == []


def test_a_save_that_may_go_round_again_before_the_exit_is_reported():
    body = """
    def train(model, steps, healthy):
        for step in range(steps):
            torch.save(model.state_dict(), "model.pt")
            if not healthy():
                continue
            sys.exit(0)

    def exit_on_one_branch(model, steps, done):
        for step in range(steps):
            torch.save(model.state_dict(), "model.pt")
            if done():
                sys.exit(0)

    def raise_caught(model, steps):
        for step in range(steps):
            try:
                torch.save(model.state_dict(), "model.pt")
                raise RuntimeError("retry")
            except RuntimeError:
                log.warning("retrying")
    """
    assert rows(body, "DDP014") == [4, 11, 18]


def test_a_save_before_an_exception_nothing_catches_runs_once():
    body = """
    def dump_and_raise(model, steps):
        for step in range(steps):
            if not healthy(model):
                torch.save(model.state_dict(), "model.pt")
                raise RuntimeError("diverged")

    def caught_and_raised_again(model, steps):
        for step in range(steps):
            try:
                torch.save(model.state_dict(), "model.pt")
                raise RuntimeError("diverged")
            except RuntimeError:
                log.error("stopping")
                raise
    """
    assert rows(body, "DDP014") == []


def test_a_file_object_opened_for_writing_is_judged_by_its_path():
    body = """
    from pathlib import Path

    def train(model, epochs, out):
        for epoch in range(epochs):
            with open(os.path.join(out, "checkpoint.pt"), "wb") as f:
                torch.save(model.state_dict(), f)
            handle = Path(out, "model.pt").open(mode="wb")
            torch.save(model.state_dict(), handle)

    def atomic(model, epochs, out):
        for epoch in range(epochs):
            tmp = os.path.join(out, "checkpoint.pt.tmp")
            with open(tmp, "wb") as f:
                torch.save(model.state_dict(), f)
            os.replace(tmp, os.path.join(out, "checkpoint.pt"))

    def per_epoch(model, epochs, out):
        for epoch in range(epochs):
            with open(f"{out}/epoch_{epoch:03d}.pt", "wb") as f:
                torch.save(model.state_dict(), f)

    def appended(model, epochs, log):
        for epoch in range(epochs):
            with open(log, "ab") as f:
                torch.save(model.state_dict(), f)
    """
    assert rows(body, "DDP014") == [7, 9]


def test_a_loop_over_a_list_of_paths_reports_the_path_every_call_rewrites():
    body = """
    class Trainer:
        def save(self, epoch):
            folder = self.save_dir
            paths = [os.path.join(folder, "checkpoint.pt")]
            if epoch % self.save_every == 0:
                paths.append(os.path.join(folder, f"checkpoint_{epoch}.pt"))
            for path in paths:
                with manager.open(path, "wb") as f:
                    torch.save(self.state, f)

        def fit(self):
            for epoch in range(self.epochs):
                self.save(epoch)
    """
    assert rows(body, "DDP014") == [10]
    assert '`os.path.join(folder, "checkpoint.pt")`' in messages(body, "DDP014")[0]


def test_a_loop_over_paths_that_each_change_or_run_once_is_left_alone():
    body = """
    def save_all(state, epoch, out):
        paths = [f"{out}/model_{epoch}.pt"]
        paths.append(f"{out}/ema_{epoch}.pt")
        for path in paths:
            torch.save(state, path)

    def export_once(state, out):
        for path in [os.path.join(out, "a.pt"), os.path.join(out, "b.pt")]:
            torch.save(state, path)

    def given(state, paths):
        for path in paths:
            torch.save(state, path)

    def train(state, epochs, out, paths):
        for epoch in range(epochs):
            save_all(state, epoch, out)
            given(state, paths)
        export_once(state, out)
    """
    assert rows(body, "DDP014") == []

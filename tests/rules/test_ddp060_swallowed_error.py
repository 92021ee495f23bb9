"""DDP060: an error of DDP training caught and let pass."""

from __future__ import annotations

import textwrap
from pathlib import Path

from ddplint.api import lint_source
from ddplint.checker import check_file
from ddplint.diagnostics import Diagnostic
from ddplint.project.queries import Project

TRAINER = """\
import os
import sys
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def fit(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = model(x).sub(y).pow(2).mean()
        loss.backward()
        optimizer.step()

def main(net, loader, optimizer):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    {guard}try:
    {guard}    fit(model, loader, optimizer)
    {guard}except Exception as err:
    {guard}    {handler}
"""


def findings(handler: str, guard: str = "") -> list[Diagnostic]:
    source = TRAINER.replace("{handler}", handler).replace("{guard}", guard)
    if guard:
        source = source.replace(guard + "try:", "if dist.get_rank() == 0:\n        try:")
    return lint_source(textwrap.dedent(source), select=["DDP060"])


def test_a_handler_that_only_logs_is_reported_with_the_training_call():
    (finding,) = findings("print(err)")
    assert finding.start.row == 19
    assert "`fit()`" in finding.message
    assert "leaves the training without an error exit" in finding.message
    assert not finding.unproven


def test_re_raising_or_exiting_on_any_path_is_left_alone():
    assert findings("raise") == []
    assert findings("sys.exit(1)") == []
    assert findings("os._exit(1)") == []
    assert findings("if 'nccl' in str(err): raise") == []


def test_a_handler_calling_a_function_of_the_file_that_exits_is_left_alone():
    source = TRAINER.replace("{guard}", "").replace("{handler}", "report(err)")
    source += "\ndef report(err):\n    print(err)\n    sys.exit(2)\n"
    assert lint_source(source, select=["DDP060"]) == []


def test_a_try_that_only_the_main_rank_runs_is_left_alone():
    source = TRAINER.replace("{handler}", "print(err)")
    source = source.replace(
        "    {guard}try:\n    {guard}    fit(model, loader, optimizer)\n"
        "    {guard}except Exception as err:\n    {guard}    print(err)\n",
        "    if dist.get_rank() == 0:\n        try:\n            fit(model, loader, optimizer)\n"
        "        except Exception as err:\n            print(err)\n",
    )
    assert "get_rank() == 0" in source
    assert lint_source(source, select=["DDP060"]) == []


def test_an_error_kept_and_raised_after_the_try_is_left_alone():
    source = TRAINER.replace("{guard}", "").replace("{handler}", "failure = err")
    source = source.replace("failure = err\n", "failure = err\n    raise failure\n")
    assert lint_source(source, select=["DDP060"]) == []


def test_in_the_loop_a_handler_that_goes_on_is_reported_and_a_skip_is_ddp011s() -> None:
    source = """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def fit(net, loader, optimizer, local_rank):
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    for x, y in loader:
        try:
            loss = model(x).sub(y).pow(2).mean()
            loss.backward()
        except Exception:
            {handler}
        optimizer.step()
"""
    (finding,) = lint_source(source.replace("{handler}", "pass"), select=["DDP060"])
    assert finding.start.row == 11
    assert "desynchronised steps" in finding.message
    skip = source.replace("{handler}", "continue")
    assert lint_source(skip, select=["DDP060"]) == []
    assert [d.code for d in lint_source(skip, select=["DDP011", "DDP060"])] == ["DDP011"]


def test_a_try_around_a_collective_but_no_training_step_is_left_alone():
    source = """\
import torch.distributed as dist

def mean(value):
    dist.init_process_group("nccl")
    try:
        dist.all_reduce(value)
    except Exception:
        pass
    return value
"""
    assert lint_source(source, select=["DDP060"]) == []


def test_loguru_catch_is_reported_unless_it_re_raises_or_has_a_handler():
    body = """\
import os
import torch.distributed as dist
from loguru import logger
from torch.nn.parallel import DistributedDataParallel as DDP

@logger.catch{arguments}
def main(net, loader, optimizer):
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group("nccl")
    model = DDP(net.cuda(local_rank), device_ids=[local_rank])
    for x, y in loader:
        optimizer.zero_grad()
        loss = model(x).mean()
        loss.backward()
        optimizer.step()
"""
    (finding,) = lint_source(body.replace("{arguments}", ""), select=["DDP060"])
    assert finding.start.row == 6
    assert "reraise=True" in finding.message
    assert lint_source(body.replace("{arguments}", "()"), select=["DDP060"]) != []
    assert lint_source(body.replace("{arguments}", "(reraise=True)"), select=["DDP060"]) == []
    on_error = "(onerror=lambda _: os._exit(1))"
    assert lint_source(body.replace("{arguments}", on_error), select=["DDP060"]) == []


def test_a_project_helper_that_may_exit_makes_the_finding_unproven(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "failures.py").write_text(
        "import sys\n\ndef report(err):\n    print(err)\n    sys.exit(1)\n"
    )
    (tmp_path / "quiet.py").write_text("def report(err):\n    print('failed:', err)\n")
    results = {}
    for helper in ("failures", "quiet"):
        source = TRAINER.replace("{guard}", "").replace("{handler}", f"{helper}.report(err)")
        target = tmp_path / f"train_{helper}.py"
        target.write_text(f"import {helper}\n" + source)
        paths = [str(p) for p in tmp_path.glob("*.py")]
        result = check_file(str(target), target.read_bytes(), ["DDP060"], Project.load(paths))
        assert not result.internal_errors
        results[helper] = [d.unproven for d in result.diagnostics]
    assert results == {"failures": [True], "quiet": [False]}

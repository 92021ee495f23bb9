"""A fix is safe only when nothing else in the project can depend on the old behaviour;
each rule's `Fix safety` section says when, and these tests hold it to that."""

from __future__ import annotations

import textwrap

from conftest import UNWRAPPED_SAVE

from ddplint.api import fix_source, lint_source
from ddplint.diagnostics import Applicability

# After the fix each of these resumes would load the un-prefixed keys into the wrapper with
# strict=False, that is, load nothing. Before, HELPER_RESUME (the load in a project helper)
# was offered a safe fix.
RESUME_INTO_WRAPPER = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def main(net, args):
    model = DDP(net)
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        missing, unexpected = model.load_state_dict(checkpoint["model"], strict=False)
    for epoch in range(args.epochs):
        if dist.get_rank() == 0:
            torch.save({"model": model.state_dict(), "epoch": epoch}, args.out)
"""

TRAINER_RESUME = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

class Trainer:
    def __init__(self, net, local_rank):
        self.model = DDP(net, device_ids=[local_rank])

    def resume(self, path):
        self.model.load_state_dict(torch.load(path)["model"], strict=False)

    def save(self, path):
        if dist.get_rank() == 0:
            torch.save({"model": self.model.state_dict()}, path)
"""


HELPER_RESUME = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from utils import load_checkpoint

def main(net, args):
    model = DDP(net)
    if args.resume:
        load_checkpoint(model, args.resume)
    if dist.get_rank() == 0:
        torch.save(model.state_dict(), args.out)
"""


def ddp006(source: str):
    (diagnostic,) = lint_source(textwrap.dedent(source), select=["DDP006"])
    assert diagnostic.fix is not None
    return diagnostic.fix.applicability


def test_ddp006_fix_is_unsafe_when_the_file_resumes_into_the_wrapper():
    for source in (RESUME_INTO_WRAPPER, TRAINER_RESUME):  # loose loads (`strict=False`)
        assert ddp006(source) is Applicability.UNSAFE
        assert fix_source(source, select=["DDP006"]) == source


def test_ddp006_a_resume_helper_given_the_wrapper_is_a_round_trip():
    """`load_checkpoint(ddp_model, path)`: the project reads its checkpoint back into the
    wrapper, so the prefixed keys are what it expects: no finding, hence no fix."""
    assert lint_source(textwrap.dedent(HELPER_RESUME), select=["DDP006"]) == []


def test_ddp006_fix_is_unsafe_when_the_file_loads_any_checkpoint():
    loads = RESUME_INTO_WRAPPER.replace(
        '        missing, unexpected = model.load_state_dict(checkpoint["model"], strict=False)\n',
        "        print(sorted(checkpoint))\n",
    )
    assert "load_state_dict" not in loads
    assert ddp006(loads) is Applicability.UNSAFE


def test_ddp006_fix_is_safe_for_a_self_contained_script_that_only_saves():
    assert ddp006(UNWRAPPED_SAVE) is Applicability.SAFE


def test_ddp006_only_loading_weights_into_the_bare_model_keeps_the_fix_safe():
    bare = UNWRAPPED_SAVE + "model.module.load_state_dict(torch.load('other.pt'))\n"
    # a checkpoint load is still a load of some file: unsafe
    assert ddp006(bare) is Applicability.UNSAFE
    no_file = UNWRAPPED_SAVE + "model.module.load_state_dict(initial_weights)\n"
    assert ddp006(no_file) is Applicability.SAFE


def _ddp006_applicability(cli, *paths) -> list[str]:
    args = ("check", "--no-cache", "--select", "DDP006", "--output-format", "json", *paths)
    return [f["fix"]["applicability"] for f in cli(*args).json()]


def test_ddp006_fix_is_unsafe_when_another_project_file_loads_checkpoints(cli, write, tmp_path):
    main = write("main.py", UNWRAPPED_SAVE)
    write("evaluate.py", "import torch\nstate = torch.load('model.pt')\n")
    # the same verdict whatever files the run names: the project is the tree on disk
    assert _ddp006_applicability(cli, main) == ["unsafe"]
    assert _ddp006_applicability(cli, main, tmp_path / "evaluate.py") == ["unsafe"]


def test_ddp006_fix_stays_safe_when_other_project_files_load_nothing(cli, write, tmp_path):
    main = write("main.py", UNWRAPPED_SAVE)
    write("plots.py", "import torch\nimport torch.distributed as dist\n")
    assert _ddp006_applicability(cli, main) == ["safe"]
    assert _ddp006_applicability(cli, main, tmp_path / "plots.py") == ["safe"]


def test_ddp022_fix_keeps_the_default_where_local_rank_is_unset():
    source = (
        "import argparse\nimport os\nimport torch\nimport torch.distributed as dist\n"
        "parser = argparse.ArgumentParser()\n"
        'parser.add_argument("--local_rank", type=int, default=-1)\n'
        "args = parser.parse_args()\n"
        "torch.cuda.set_device(args.local_rank)\n"
    )
    fixed = fix_source(source, select=["DDP022"], unsafe=True)
    assert 'default=int(os.environ.get("LOCAL_RANK", -1))' in fixed
    assert fix_source(source, select=["DDP022"]) == source  # unsafe: not without the flag

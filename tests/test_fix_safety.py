"""A fix is safe only when nothing else in the project can depend on the old behaviour;
each rule's `Fix safety` section says when, and these tests hold it to that."""

from __future__ import annotations

import textwrap

from conftest import UNWRAPPED_SAVE

from ddplint.api import fix_source, lint_source
from ddplint.diagnostics import Applicability

RESUME_INTO_WRAPPER = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

def resume(model, path):
    model.load_state_dict(torch.load(path)["model"], strict=False)

def main(net, path):
    model = DDP(net)
    resume(model, path)
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict()}, path)
"""


def ddp006(source: str):
    (diagnostic,) = lint_source(textwrap.dedent(source), select=["DDP006"])
    assert diagnostic.fix is not None
    return diagnostic.fix.applicability


def test_ddp006_fix_is_unsafe_when_the_file_resumes_into_the_wrapper():
    # after the fix, strict=False would load none of the (no longer prefixed) keys
    assert ddp006(RESUME_INTO_WRAPPER) is Applicability.UNSAFE
    assert fix_source(RESUME_INTO_WRAPPER, select=["DDP006"]) == RESUME_INTO_WRAPPER


def test_ddp006_fix_is_unsafe_when_the_file_loads_any_checkpoint():
    loads = RESUME_INTO_WRAPPER.replace(
        '    model.load_state_dict(torch.load(path)["model"], strict=False)\n',
        "    return torch.load(path)\n",
    )
    assert ddp006(loads) is Applicability.UNSAFE


def test_ddp006_fix_is_safe_for_a_self_contained_script_that_only_saves():
    assert ddp006(UNWRAPPED_SAVE) is Applicability.SAFE


def test_ddp006_load_into_the_bare_model_keeps_the_fix_safe():
    bare = UNWRAPPED_SAVE + "model.module.load_state_dict(torch.load('other.pt'))\n"
    # a checkpoint load is still a load of some file: unsafe
    assert ddp006(bare) is Applicability.UNSAFE
    no_file = UNWRAPPED_SAVE + "model.module.load_state_dict(initial_weights)\n"
    assert ddp006(no_file) is Applicability.SAFE


def test_ddp006_fix_is_unsafe_when_the_project_has_other_modules(cli, write, tmp_path):
    main = write("main.py", UNWRAPPED_SAVE)
    write("evaluate.py", "import torch\nimport torch.distributed as dist\n")
    [finding] = cli(
        "check",
        "--no-cache",
        "--select",
        "DDP006",
        "--output-format",
        "json",
        main,
        tmp_path / "evaluate.py",
    ).json()
    assert finding["fix"]["applicability"] == "unsafe"
    alone = cli("check", "--no-cache", "--select", "DDP006", "--output-format", "json", main)
    assert alone.json()[0]["fix"]["applicability"] == "safe"


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

"""DDP022: torch.distributed.launch or a --local_rank argument."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain.ddp_facts import facts_of, keyword, string_value
from ddplint.domain.launch_commands import passes_local_rank_itself
from ddplint.domain.local_rank_option import LOCAL_RANK_FLAGS, imports_deepspeed, is_required
from ddplint.domain.versions import TORCHRUN_SINCE, Version, pinned_torch, shown_pin
from ddplint.project_files import project_root
from ddplint.rule import Finding, FixSpec, Rule, register
from ddplint.rules.ddp022_deprecated_launch.launch import (
    device_from_environment,
    launch_uses,
    local_rank_arguments,
    option_launch,
    options_read_elsewhere,
    rewritten_command,
)

_LAUNCH_MESSAGE = "`torch.distributed.launch` is deprecated: use `torchrun`, which sets LOCAL_RANK"


@register
class DeprecatedLaunch(Rule):
    code = "DDP022"
    name = "deprecated-distributed-launch"
    severity = Severity.INFO
    needs_several = False  # the launcher is deprecated whatever it starts
    # opt-in: judged on every fresh set (fresh23..46, all runs) 13 true / 65 false / 170
    # debatable. The launcher works on the torch a project pins; where it breaks (torch 2's
    # `--local-rank` against a parser of `--local_rank` only), DDP040 reports the harm.
    default = False
    summary = "torch.distributed.launch / --local_rank argument: deprecated, use torchrun"
    requires_distributed = False
    explanation = """\
## What it does
Flags uses of the deprecated `torch.distributed.launch` launcher (an import, or a
`-m torch.distributed.launch` command in a string or argument list) and an argparse
`--local_rank` / `--local-rank` argument in a script that never reads `LOCAL_RANK` from the
environment (also declared through an alias, `arg = parser.add_argument`, or in an options
module whose value a project script importing it reads as `args.local_rank` while neither
reads LOCAL_RANK; copying the option into `os.environ["LOCAL_RANK"]` is no use of it). A
use on a branch taken only on a torch older than 1.10, where `torchrun` does
not exist (`if Version(torch.__version__) >= Version("1.10"): torchrun ... else:
python -m torch.distributed.launch ...`), is left alone; in a project whose pins (its
packaging files, or `pip install torch==1.4.0` in its READMEs and shell scripts) allow no
torch from 1.10 on, every finding is unproven: the advice needs a torch it does not
install.

## Why is this bad?
`torch.distributed.launch` is deprecated in favour of `torchrun`. Only the old launcher
passes `--local-rank=N` to the script; `torchrun` sets the `LOCAL_RANK` environment
variable instead. Under `torchrun` a `--local_rank` argument keeps its default on every
rank, so code that picks the GPU from it puts all ranks on the same device. (Scripts
launched by DeepSpeed, which does pass `--local_rank`, are left alone; in a project
whose own launcher writes `--local_rank=N` into each worker's command, or whose shell
scripts pass `--local_rank=$i`, or whose commands (a shell script, the README) start the
script with `python -m torch.distributed.launch` without `--use_env` (or start a script
of its folder so, and no script of the folder with torchrun: scripts side by side are
launched alike), the finding is unproven: torchrun is a launch it does not use. That
launcher passes `--local_rank=N` before torch 2.0 and `--local-rank=N` from 2.0 on;
argparse does not treat `-` and `_` as the same, so a parser that declares one spelling
only fails at argument parsing under the other: DDP040's finding, where the project's
commands and torch pins show it.)

## Example
```python
parser.add_argument("--local_rank", type=int, default=-1)
```

## Use instead
```python
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
```
or drop the argument and read `int(os.environ["LOCAL_RANK"])`; launch with
`torchrun --nproc_per_node=N train.py`.

An argument that the script never reads (a script that is its own launcher and sets
`args.local_rank = rank` in the loop that starts each worker `Process` never reads the
parsed value), or one kept next to a device taken from the
`LOCAL_RANK` environment variable (read by the script itself or by a project helper it
calls, such as `utils.init_distributed_mode(args)` in another file, or a method of an object
a project class or helper made, such as `strategy.setup_distributed()` after
`strategy = get_strategy(args)`, which copies the argument into LOCAL_RANK when given and
reads LOCAL_RANK otherwise; also a helper imported by
the project's installed package name: `import mae_st.util.misc` where setup.py, setup.cfg
or pyproject.toml maps `mae_st` onto the repository, or the repository folder is itself
named `mae_st`), is left alone. A `required=True` argument is DDP040's: under `torchrun`
the script stops at argument parsing.

## Fix safety
Both fixes are unsafe. The argument fix makes the default read `LOCAL_RANK` from the
environment and keeps the old default as the fallback where the variable is unset
(`default=-1` becomes `default=int(os.environ.get("LOCAL_RANK", -1))`, so `-1` still means
"not distributed"). It is offered only for a `type=int` argument with an int literal
default in a file importing `os`; never for a `required=True` argument (a default would not
make it optional) or one without a default. A
command string `python -m torch.distributed.launch --use_env ...` is rewritten to
`torchrun ...` only when it carries `--use_env` (the script already reads the
environment) and nothing else needs changing; `torchrun` must be on the `PATH`.

## References
- https://pytorch.org/docs/stable/elastic/run.html
- https://pytorch.org/docs/stable/distributed.html#launch-utility
"""
    fixable = Applicability.UNSAFE
    flag = (
        """\
import argparse
import os
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
dist.init_process_group("nccl")
""",
        """\
import subprocess
import sys

cmd = [sys.executable, "-m", "torch.distributed.launch", "--nproc_per_node=4", "train.py"]
subprocess.run(cmd, check=True)
""",
        """\
import os
import torch.distributed.launch

os.system("python -m torch.distributed.launch --use_env --nproc_per_node=8 train.py")
""",
    )
    allow = (
        """\
import argparse
import os
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
dist.init_process_group("nccl")
""",
        """\
import subprocess

def launch(n):
    \"\"\"Runs the job with torchrun (not python -m torch.distributed.launch).\"\"\"
    subprocess.run(["torchrun", f"--nproc_per_node={n}", "train.py"], check=True)
""",
        """\
import argparse
import deepspeed
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        findings = list(self._check(ctx))
        old = _pinned_before_torchrun(ctx) if findings else None
        for finding in findings:
            if old is not None:
                shown = shown_pin(old)
                message = (
                    f"{finding.message} (unproven: the project pins torch {shown}, older "
                    "than 1.10, the first release with torchrun)"
                )
                finding = dataclasses.replace(finding, message=message, unproven=True)
            yield finding

    def _check(self, ctx: FileContext) -> Iterator[Finding]:
        for node in launch_uses(ctx):
            command = rewritten_command(node)
            fix = None
            if command is not None and type(node) is cst.SimpleString:
                fix = FixSpec(
                    "Launch with `torchrun`",
                    replacements=((node, f"{node.prefix}{node.quote}{command}{node.quote}"),),
                    applicability=Applicability.UNSAFE,
                )
            yield Finding(node, _LAUNCH_MESSAGE, fix=fix)
        distributed = facts_of(ctx).is_distributed
        if not distributed or imports_deepspeed(ctx) or device_from_environment(ctx):
            return  # DeepSpeed passes --local_rank; an environment device makes it a fallback
        # The project's own launcher, or the deprecated one its commands document, passes
        # the option: torchrun is a launch it does not use.
        documented = option_launch(ctx)
        unproven = documented is not None or (
            os.path.isfile(ctx.path) and passes_local_rank_itself(project_root(ctx.path))
        )
        arguments = list(local_rank_arguments(ctx))
        declared = frozenset(f for call in arguments for f in _flags(call))
        for call in arguments:
            if is_required(call):
                continue  # the run fails: DDP040 reports it
            message = _message(declared, documented)
            yield Finding(call, message, fix=self._argument_fix(ctx, call), unproven=unproven)
        for call, reader, alone in options_read_elsewhere(ctx):
            if is_required(call):
                continue
            message = (
                f"{_message(_flags(call), documented)}, and `{reader}` reads it as the local rank"
            )
            # a reader the project starts only as one process: torchrun is a launch it
            # does not use
            fix = self._argument_fix(ctx, call)
            yield Finding(call, message, fix=fix, unproven=unproven or alone)

    @staticmethod
    def _argument_fix(ctx: FileContext, call: cst.Call) -> FixSpec | None:
        """`default=N` -> `default=int(os.environ.get("LOCAL_RANK", N))`: the same value
        where LOCAL_RANK is unset, the launcher's where it is set. Only for an int literal
        default of a `type=int` argument in a file importing `os`."""
        os_name = next((k for k, v in ctx.imports.bindings.items() if v == "os"), None)
        kind = keyword(call, "type")
        default = keyword(call, "default")
        if os_name is None or kind is None or ctx.code(kind.value) != "int" or default is None:
            return None
        fallback = _int_literal(default.value)
        if fallback is None:
            return None  # None or a computed default: no env fallback keeps its meaning
        return FixSpec(
            "Default the argument to the LOCAL_RANK environment variable",
            replacements=(
                (default.value, f'int({os_name}.environ.get("LOCAL_RANK", {fallback}))'),
            ),
            applicability=Applicability.UNSAFE,
        )


def _pinned_before_torchrun(ctx: FileContext) -> Version | None:
    """The newest torch the project's pins allow for this file (`pinned_torch`), when it
    is older than torchrun: the advice needs a torch the project does not install."""
    if not os.path.isfile(ctx.path):
        return None
    pinned = pinned_torch(project_root(ctx.path), ctx.path)
    return pinned if pinned is not None and pinned < TORCHRUN_SINCE else None


def _flags(call: cst.Call) -> frozenset[str]:
    """The spellings of the local-rank option an `add_argument` call declares."""
    spelled = (string_value(a.value) for a in call.args if a.keyword is None)
    return frozenset(flag for flag in spelled if flag in LOCAL_RANK_FLAGS)


def _message(flags: frozenset[str], documented: str | None) -> str:
    """What the option (declared with `flags`, in one call or across the parser's calls)
    does under the launch the project documents (`documented`: who starts it with
    torch.distributed.launch, `option_launch`) and under torchrun."""
    torchrun = (
        "torchrun sets the LOCAL_RANK environment variable instead, so under torchrun this "
        "argument keeps its default on every rank"
    )
    if documented is None:
        return (
            "`--local_rank` is only passed by the deprecated torch.distributed.launch; " + torchrun
        )
    if flags == {"--local_rank"}:
        works = "passes `--local_rank=N` before torch 2.0 (`--local-rank=N` from 2.0 on, "
        works += "which this parser does not know)"
    elif flags == {"--local-rank"}:
        works = "passes `--local-rank=N` from torch 2.0 on (`--local_rank=N` before, "
        works += "which this parser does not know)"
    else:
        works = "passes `--local_rank=N` (`--local-rank=N` from torch 2.0 on)"
    return f"{documented} with the deprecated torch.distributed.launch, which {works}; {torchrun}"


def _int_literal(expr: cst.BaseExpression) -> str | None:
    """The source of an int literal, signed or not (`0`, `-1`), else None."""
    if type(expr) is cst.Integer:
        return expr.value
    if (
        type(expr) is cst.UnaryOperation
        and type(expr.operator) is cst.Minus
        and type(expr.expression) is cst.Integer
    ):
        return f"-{expr.expression.value}"
    return None

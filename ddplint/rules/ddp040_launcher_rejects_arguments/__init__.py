"""DDP040: the script's argument parser rejects what the launcher passes."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.apis import PROCESS_STARTERS
from ddplint.domain.launch_commands import (
    commented_out_launch,
    environment_launches,
    launches_with_own_option,
    option_launches,
)
from ddplint.domain.local_rank_option import (
    destination,
    imports_deepspeed,
    is_required,
    local_rank_options,
)
from ddplint.domain.project_view import project_of
from ddplint.domain.scripts import main_blocks
from ddplint.domain.versions import installs_torch_2
from ddplint.project_files import project_files, project_root
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp040_launcher_rejects_arguments.parser import (
    declared_on_some_paths,
    default_of,
    read_as_parsed,
    strict_parse,
)

# A `--local_rank` / `--local-rank` option declared on a line that is not a comment.
_DECLARED = re.compile(r"^[^#\n]*add_argument\(\s*['\"]--local[_-]rank['\"]", re.MULTILINE)


@register
class LauncherRejectsArguments(Rule):
    code = "DDP040"
    name = "launcher-rejects-arguments"
    severity = Severity.ERROR
    # opt-in: first contact over the last 19 sets, fresh167 to fresh185
    # (bench/realworld/first_contact.py): 5 / 2 / 1, under the bar (all sets: 14 / 7 / 10);
    # earned back for round 76 only (3 / 1 / 1 up to fresh183), lost again with it
    default = False
    needs_several = False  # the launcher passes the option to one process too
    summary = "The argument parser rejects what the launcher passes: every process exits at start"
    requires_distributed = False
    explanation = """\
## What it does
Flags an argparse parser that cannot parse the command line a launcher gives it:
- a `--local_rank` option declared `required=True`: `torchrun` passes no such option (it
  sets the `LOCAL_RANK` environment variable), and from torch 2.0 on
  `torch.distributed.launch` passes `--local-rank=N` (dash), which a parser knowing only
  `--local_rank` (underscore) rejects;
- a parser that knows only `--local_rank` in a script (or an options module a script
  imports) that a shell script, Makefile or README of the project starts with
  `python -m torch.distributed.launch` without `--use_env`: from torch 2.0 on that
  launcher passes `--local-rank=N`;
- a script started that way whose parser declares no local-rank option at all (the
  `add_argument("--local_rank", ...)` line commented out): the launcher passes
  `--local_rank=N` (before torch 2.0) or `--local-rank=N` (from 2.0), which it rejects on
  every torch version;
- a script the project's commands start with `torchrun` (or `torch.distributed.run`)
  that takes its local rank only from a `--local_rank` option (neither it nor a project
  module it imports names `LOCAL_RANK`): the option keeps its default in every process.

A command in a README may span lines without continuations inside a code block: the
script named on the next lines of the block is the one launched.

The torch the project pins decides what `torch.distributed.launch` passes: a pin older than
2.0 in the packaging files at its root, or in a README or shell script of the script's
folder or a folder above it (`pip install torch==1.8.1`, `pytorch=1.11`, `torch<2.0`, a
Dockerfile's base image: `FROM nvcr.io/nvidia/pytorch:21.07-py3`, `FROM
pytorch/pytorch:1.10.0-cuda11.3-cudnn8-runtime`, a conda install of pytorch with
`cudatoolkit=11.3`, a package PyTorch's conda builds came with up to 1.12.1), means
`--local_rank=N`, which an underscore-only parser accepts: not reported, nor a required
option in a script the project starts with that launcher. So does an interpreter too old
for torch 2.0 that runs every launch there (`/usr/bin/python3.6 -m
torch.distributed.launch ...`: the newest torch for Python 3.7 is 1.13). The first two
findings rest on a torch 2.x: they are proven where the project installs one (a
requirements line naming torch with no upper bound, `pip install torch` in a command,
`"torch>=1.8"` in a packaging file, a pin allowing 2.x) or, for a required option, starts
the script with torchrun; where nothing the project ships names its torch (code of the
torch 1.x years, whose launcher passes `--local_rank`), they are unproven (`--preview`).

Left alone: a parser declaring both spellings, in one `add_argument` call or in two, an
option declared only under a condition (`if PYTORCH_MAJOR_VERSION == 1:`),
parsers that parse leniently (`parse_known_args`, an `argparse.REMAINDER`
argument, an explicit argument list), a parser handed to other code that may declare the
option out of sight (`Engine(custom_parser=parser)`), files of a DeepSpeed job (DeepSpeed's
launcher passes `--local_rank=N`), and commands given `--use_env`. In a project that starts its
workers with a `--local_rank=N` of its own (its own launcher module, a shell loop passing
`--local_rank=$i`, or the `deepspeed` launcher), the required-option finding is unproven.

## Why is this bad?
`parser.parse_args()` exits with status 2 ("the following arguments are required",
"unrecognized arguments: --local-rank=0") on every process before any training starts: the
launch documented by the project, or the standard one, does not run at all. Under
`torchrun`, an option-only local rank is the same default in every process, so the
processes do not take their own GPU and rank.

## Example
```python
parser.add_argument("--local_rank", type=int, required=True)
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
```

## Use instead
```python
parser.add_argument("--local-rank", "--local_rank", type=int,
                    default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
```
and launch with `torchrun --nproc_per_node=N train.py`.

## Fix safety
No fix is offered: whether to drop the option or accept both spellings is the author's
choice, and the project's launch scripts may need changing with it.

## References
- https://pytorch.org/docs/stable/distributed.html#launch-utility (changed in 2.0.0: the
  launcher passes `--local-rank=<rank>`)
- https://github.com/pytorch/pytorch/pull/94505
- https://pytorch.org/docs/stable/elastic/run.html
"""
    flag = (
        """\
import argparse
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, required=True)
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
dist.init_process_group("nccl")
""",
        """\
import argparse
import torch

def get_parser():
    parser = argparse.ArgumentParser("pretraining")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--local-rank", "--local_rank", type=int, required=True)
    return parser
""",
        """\
import argparse
import torch

parser = argparse.ArgumentParser()
arg = parser.add_argument
arg("--config", default="configs/base.json")
arg("--local_rank", type=int, required=True)
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
""",
    )
    allow = (
        """\
import argparse
import os
import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local-rank", "--local_rank", type=int,
                    default=int(os.environ.get("LOCAL_RANK", 0)))
args = parser.parse_args()
torch.cuda.set_device(args.local_rank)
dist.init_process_group("nccl")
""",
        """\
import argparse
import deepspeed

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, required=True)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
deepspeed.init_distributed()
""",
        """\
import argparse
import os
import torch

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=-1)
args, _ = parser.parse_known_args()
local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank))
torch.cuda.set_device(local_rank)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if imports_deepspeed(ctx):
            return  # DeepSpeed's launcher passes --local_rank=N
        real = os.path.isfile(ctx.path)
        root = project_root(ctx.path) if real else None
        own = root is not None and launches_with_own_option(root)
        options = list(local_rank_options(ctx))
        if any(declared_on_some_paths(ctx, call) for call, _ in options):
            return  # an option declared on some paths only: what the launch meets is unknown
        # The project starts this script with torch.distributed.launch itself, which passes
        # `--local_rank` before torch 2.0.
        launched = root is not None and os.path.abspath(ctx.path) in option_launches(root)
        # What the launch passes rests on the torch installed: 2.x, one its pins stop before
        # (False: the launcher passes `--local_rank`), or unknown where nothing the project
        # ships names its torch (code of the 1.x years).
        torch_2 = installs_torch_2(root, ctx.path) if root is not None else None
        for call, flags in options:
            if is_required(call):
                if launched and torch_2 is False:
                    continue
                known = torch_2 or _started_by_torchrun(ctx, root)
                yield Finding(call, _required_message(flags), unproven=own or not known)
        if root is None or own:
            return
        yield from _environment_launch(ctx, root, options)
        command = _launch_reaching(ctx, root, options)
        parse = strict_parse(ctx)
        if command is None or parse is None:
            return
        shown = os.path.relpath(command, root)
        # a launch the project documents in a commented-out command, not one it runs
        documented = commented_out_launch(root, ctx.path)
        if any("--local-rank" in flags for _, flags in options):
            return  # another `add_argument` declares the spelling torch 2's launcher passes
        for call, flags in options:
            if not is_required(call) and "--local-rank" not in flags:
                if torch_2 is False:
                    continue  # the launcher of the torch the project pins passes --local_rank
                yield Finding(
                    call,
                    _underscore_message(shown, torch_2, documented),
                    unproven=documented or not torch_2,
                )
        if not options and not _declared_in_closure(ctx, root) and not _handed_on(ctx, parse):
            yield Finding(parse, _undeclared_message(shown, documented), unproven=documented)


def _started_by_torchrun(ctx: FileContext, root: str | None) -> bool:
    """The project starts this script with torchrun (or `torch.distributed.run`), which
    passes no `--local_rank` option on any torch."""
    return root is not None and os.path.abspath(ctx.path) in environment_launches(root)


def _environment_launch(
    ctx: FileContext, root: str, options: list[tuple[cst.Call, frozenset[str]]]
) -> Iterator[Finding]:
    """The project starts this script with torchrun, which passes no `--local_rank`, and
    the script takes its local rank from the option alone: it keeps its default."""
    path = os.path.abspath(ctx.path)
    command = environment_launches(root).get(path)
    if command is None or any(ctx.calls_to(*PROCESS_STARTERS)) or _sees_local_rank(ctx, root):
        return
    for call, flags in options:
        default = default_of(call)
        if is_required(call) or not read_as_parsed(ctx, destination(call, flags)):
            continue
        value = ctx.code(default) if default is not None else "None"
        yield Finding(
            call,
            f"`{os.path.relpath(command, root)}` starts this script with torchrun, which "
            "passes no `--local_rank` option (it sets the LOCAL_RANK environment variable), "
            "and the script reads the local rank from this option only: it keeps its default "
            f"({value}) in every process instead of 0..N-1; read LOCAL_RANK from the "
            "environment",
        )


def _sees_local_rank(ctx: FileContext, root: str) -> bool:
    """The script, or a module of the project it imports, names LOCAL_RANK (maybe reading
    it from the environment). Without a project view the file imports none."""
    project = project_of(ctx)
    files = project_files(root)

    def names(path: str) -> bool:
        return "LOCAL_RANK" in (files.text(path) or "")

    if project is None:
        return names(os.path.abspath(ctx.path))
    return project.text_closure_any(ctx.path, names)


def _required_message(flags: frozenset[str]) -> str:
    both = "--local-rank" in flags
    launch = (
        ""
        if both
        else " and from torch 2.0 on torch.distributed.launch passes `--local-rank=N`, "
        "which this parser does not know"
    )
    return (
        "`--local_rank` is required, but torchrun passes no such option (it sets the "
        f"LOCAL_RANK environment variable){launch}: every process exits at argument parsing "
        "before training starts; read LOCAL_RANK from the environment, or give the option a "
        "default"
    )


def _starts(command: str, documented: bool) -> str:
    """Who starts the script with the option-passing launcher."""
    if documented:
        return f"`{command}` documents, in a commented-out command, a launch of this script"
    return f"`{command}` starts this script"


def _underscore_message(command: str, torch_2: bool | None, documented: bool) -> str:
    installed = " (the torch the project installs)" if torch_2 else ""
    return (
        f"{_starts(command, documented)} with torch.distributed.launch without `--use_env`, "
        f"which from torch 2.0 on{installed} passes `--local-rank=N`; this parser knows only "
        "`--local_rank`, so every process exits with 'unrecognized arguments' before "
        'training starts; declare both spellings (`add_argument("--local-rank", '
        '"--local_rank", ...)`) or launch with torchrun'
    )


def _undeclared_message(command: str, documented: bool) -> str:
    return (
        f"{_starts(command, documented)} with torch.distributed.launch without `--use_env`, "
        "which passes the local rank as an option (`--local_rank=N`, `--local-rank=N` from "
        "torch 2.0 on); this parser declares neither, so every process exits with "
        "'unrecognized arguments' before training starts; launch with torchrun (or add "
        "`--use_env`)"
    )


def _launch_reaching(
    ctx: FileContext, root: str, options: list[tuple[cst.Call, frozenset[str]]]
) -> str | None:
    """The command file starting this script with the option-passing launcher, or, for a
    file declaring the option outside its `__main__` block, one starting a script that
    imports this file."""
    launches = option_launches(root)
    path = os.path.abspath(ctx.path)
    if path in launches:
        return launches[path]
    project = project_of(ctx)
    blocks = main_blocks(ctx.module)
    imported = [c for c, _ in options if not any(ctx.is_inside(c, b) for b in blocks)]
    if not imported or project is None:
        return None  # a parser of this file's own `__main__` block does not run on import
    for script, command in sorted(launches.items()):
        if path in project.text_closure(script):
            return command
    return None


def _handed_on(ctx: FileContext, parse: cst.Call) -> bool:
    """The parser `parse` reads is handed to other code before or after (`Engine(
    custom_parser=parser)`, `add_model_args(parser)`), which may add the local-rank option
    to it out of sight."""
    func = parse.func
    if type(func) is not cst.Attribute or type(func.value) is not cst.Name:
        return False
    name = func.value.value
    return any(
        type(arg.value) is cst.Name and arg.value.value == name
        for call in ctx.calls
        for arg in call.args
    )


def _declared_in_closure(ctx: FileContext, root: str) -> bool:
    """A module the script imports (any other file of the project where the run has no
    project view) declares a local-rank option on a line not commented out: it may add it
    to this parser."""
    project = project_of(ctx)
    files = project_files(root)
    path = os.path.abspath(ctx.path)
    others = project.text_closure(path) if project is not None else files.paths
    return any(_DECLARED.search(files.text(p) or "") for p in others if p != path)

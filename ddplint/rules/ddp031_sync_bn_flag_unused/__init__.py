"""DDP031: a `--sync-bn` command-line option that nothing in the project reads."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.project_view import project_of
from ddplint.names import dotted
from ddplint.project_files import named_in_other_files
from ddplint.rule import Finding, Rule, register

# `--sync-bn`, `--sync_bn`, `--syncbn`, `--sync-batchnorm`, `--use-sync-bn`, `--SyncBN`.
_OPTION = re.compile(r"^--?(use[-_]?)?sync[-_]?(bn|batch[-_]?norm)$", re.IGNORECASE)
# What applies synchronised BatchNorm: its presence anywhere means BN may be synced.
_SYNC_WORDS = ("SyncBatchNorm", "convert_sync_batchnorm", "convert_syncbn_model")
# Calls that only show a value.
_SHOWS = re.compile(r"^(print|pprint|info|debug|warning|log|write|add_text|format)$")
_PARSE = frozenset({"parse_args", "parse_known_args"})


@register
class SyncBnFlagUnused(Rule):
    code = "DDP031"
    name = "sync-bn-flag-unused"
    severity = Severity.WARNING
    summary = "`--sync-bn` option parsed but never applied: BatchNorm stays per rank"
    explanation = """
## What it does
Flags an `add_argument("--sync-bn", ...)` (also `--sync_bn`, `--syncbn`,
`--sync-batchnorm`, `--use-sync-bn`) whose value nothing reads: in this file the option's
attribute (`args.sync_bn`) is read nowhere but in printing or logging, the parsed
arguments are not handed whole to code outside the project (`vars(args)`, a library call),
and no other file of the project names the option's attribute or applies synchronised
BatchNorm (`SyncBatchNorm`, `convert_sync_batchnorm`, apex's `convert_syncbn_model`).

## Why is this bad?
Whoever launches the job with `--sync-bn` believes BatchNorm statistics are computed over
the global batch. Nothing converts the model, so each rank normalises with the statistics
of its own per-rank batch: with 8 processes and a global batch of 256, each BatchNorm
layer sees 32 samples instead of 256, the same as without the option. On one process the
option could not matter; on N it silently does nothing.

## Example
```python
parser.add_argument("--sync-bn", action="store_true")
args = parser.parse_args()
model = DDP(build_model().cuda(local_rank), device_ids=[local_rank])
```

## Use instead
```python
if args.sync_bn:
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
model = DDP(model.cuda(local_rank), device_ids=[local_rank])
```

## Fix safety
No fix is offered: where the conversion belongs (before the DDP wrap) is the author's call.

## References
- https://pytorch.org/docs/stable/generated/torch.nn.SyncBatchNorm.html
"""
    flag = (
        """
import argparse
import torch.distributed as dist

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sync-bn", action="store_true", help="use SyncBatchNorm")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    print(args)
""",
        """
import argparse
import logging
import torch.distributed as dist

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--syncbn", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    logging.info("sync bn: %s", args.syncbn)
""",
        """
import argparse
import torch.distributed as dist

def options():
    p = argparse.ArgumentParser()
    p.add_argument("--use_sync_bn", type=int, default=1)
    return p.parse_args()

def main():
    opt = options()
    dist.init_process_group("nccl")
""",
    )
    allow = (
        """
import argparse
import torch.distributed as dist
from torch import nn

def main(model):
    parser = argparse.ArgumentParser()
    parser.add_argument("--sync-bn", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    if args.sync_bn:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
""",
        """
import argparse
import torch.distributed as dist
from omegaconf import OmegaConf

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sync_bn", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    cfg = OmegaConf.create(vars(args))
""",
        """
import argparse
import torch.distributed as dist
from torch import nn

def main(build):
    parser = argparse.ArgumentParser()
    parser.add_argument("--sync-bn", dest="syncbn", action="store_true")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    norm = nn.SyncBatchNorm if args.syncbn else nn.BatchNorm2d
    return build(norm)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for call in ctx.method_calls("add_argument"):
            dest = _dest(call)
            if dest is None or _read(ctx, call, dest) or _escapes(ctx):
                continue
            if _named_elsewhere(ctx, dest):
                continue
            option = next(s for s in _options(call) if _OPTION.match(s))
            yield Finding(
                call,
                f"`{option}` is parsed but its value (`{dest}`) is never used and nothing "
                "converts the model to SyncBatchNorm: passing it changes nothing, and each "
                "rank's BatchNorm layers keep normalising with the statistics of its own "
                "per-rank batch (1/N of the global batch with N processes)",
            )


def _options(call: cst.Call) -> list[str]:
    found = []
    for arg in call.args:
        if arg.keyword is None and type(arg.value) is cst.SimpleString:
            value = arg.value.evaluated_value
            if isinstance(value, str):
                found.append(value)
    return found


def _dest(call: cst.Call) -> str | None:
    """The attribute a sync-BN option is stored in, or None for another option."""
    options = _options(call)
    if not any(_OPTION.match(o) for o in options):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "dest":
            value = arg.value
            if type(value) is cst.SimpleString and isinstance(value.evaluated_value, str):
                return value.evaluated_value
            return None
    longs = [o for o in options if o.startswith("--")]
    return (longs or options)[0].lstrip("-").replace("-", "_")


def _read(ctx: FileContext, option: cst.Call, dest: str) -> bool:
    """This file reads the option's value anywhere but in a call that only shows it:
    `args.sync_bn`, `getattr(args, "sync_bn")`, `cfg["sync_bn"]`."""
    for node in ctx.nodes_of(cst.Attribute):
        if type(node) is cst.Attribute and node.attr.value == dest and not _shown(ctx, node):
            parent = ctx.parent(node)
            if not (type(parent) is cst.AssignTarget and parent.target is node):
                return True
    for node in ctx.nodes_of(cst.SimpleString):
        if (
            type(node) is cst.SimpleString
            and node.evaluated_value == dest
            and not ctx.is_inside(node, option)
            and not _shown(ctx, node)
        ):
            return True
    return False


def _shown(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` is an argument of a call that only prints or logs it."""
    for ancestor in ctx.ancestors(node):
        if type(ancestor) is cst.Call:
            name = (dotted(ancestor.func) or "").rpartition(".")[2]
            return bool(_SHOWS.match(name))
        if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return False
    return False


def _escapes(ctx: FileContext) -> bool:
    """The parsed arguments may be read by name where the project cannot see: converted to
    a dict (`vars(args)`, `args.__dict__`), or handed whole to a call that is not a function
    of the project, nor printing or logging."""
    if any(
        type(node) is cst.Attribute and node.attr.value == "__dict__"
        for node in ctx.nodes_of(cst.Attribute)
    ):
        return True
    parsed = _parsed_names(ctx)
    for call in ctx.calls:
        name = (dotted(call.func) or "").rpartition(".")[2]
        if name == "vars":
            return True
        if not any(type(a.value) is cst.Name and a.value.value in parsed for a in call.args):
            continue
        if _SHOWS.match(name) or ctx.resolver.callees(call):
            continue
        project = project_of(ctx)
        if project is None or project.resolve(ctx, call) is None:
            return True
    return False


def _parsed_names(ctx: FileContext) -> set[str]:
    """Names bound to parsed arguments: `args = parser.parse_args()`, or the call of a
    function of this file returning them (`opt = options()`)."""
    makers: list[cst.Call] = list(ctx.method_calls(*_PARSE))
    for defs in ctx.model.functions.values():
        for func in defs:
            if any(_parses(r) for r in ctx.resolver.returned(func)):
                makers.extend(
                    c
                    for c in ctx.model.calls_by_name.get(func.name.value, [])
                    if func in ctx.resolver.callees(c)
                )
    return {name for call in makers if (name := ctx.name_bound_to(call)) is not None}


def _parses(expr: cst.BaseExpression) -> bool:
    return (
        type(expr) is cst.Call
        and type(expr.func) is cst.Attribute
        and expr.func.attr.value in _PARSE
    )


def _named_elsewhere(ctx: FileContext, dest: str) -> bool:
    """This file applies synchronised BatchNorm (a name or call of it), or another file of
    the project names the option's attribute or synchronised BatchNorm (a text test: a
    mention counts). Other files are read only for a file on disk."""
    for node in ctx.nodes_of(cst.Name, cst.Attribute):
        name = dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if name is not None and name.rpartition(".")[2] in _SYNC_WORDS:
            return True
    if not os.path.isfile(ctx.path):
        return False
    return any(named_in_other_files(ctx.path, word) for word in (dest, *_SYNC_WORDS))

"""DDP022: torch.distributed.launch or a --local_rank argument."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.facts import environ_key, keyword, last_name
from ddplint.facts import string_value as _literal_value
from ddplint.names import dotted
from ddplint.rule import Finding, FixSpec, Rule, register


def string_value(expr: cst.BaseExpression | None) -> str | None:
    """`facts.string_value`, but None for a literal Python cannot evaluate (a NUL byte
    in the source): this rule reads every string of the file."""
    try:
        return _literal_value(expr)
    except (SyntaxError, ValueError):
        return None


_INSPECTED = (
    cst.Call,
    cst.Subscript,
    cst.Import,
    cst.ImportFrom,
    cst.SimpleString,
    cst.ConcatenatedString,
    cst.FormattedString,
)
_LAUNCH = "torch.distributed.launch"
_LOCAL_RANK_FLAGS = frozenset({"--local_rank", "--local-rank"})
# `-m torch.distributed.launch` inside a command line.
_LAUNCH_COMMAND = re.compile(r"(^|\s)-m\s+torch\.distributed\.launch(\s|$)")
# A whole command simple enough to rewrite: `python -m torch.distributed.launch --use_env ...`
_REWRITABLE = re.compile(r"^(?:python3?\s+)?-m\s+torch\.distributed\.launch((?:\s+\S+)*)\s*$")
_USE_ENV = frozenset({"--use_env", "--use-env"})
_PROSE_CALLS = frozenset(
    {"print", "debug", "info", "warning", "warn", "error", "exception", "critical", "echo"}
)


def _launch_in_text(text: str) -> bool:
    return text.strip() == _LAUNCH or bool(_LAUNCH_COMMAND.search(text))


def _rewritten_command(text: str) -> str | None:
    """`torchrun ...` for a `python -m torch.distributed.launch --use_env ...` command
    (the script already reads LOCAL_RANK from the environment), else None."""
    match = _REWRITABLE.match(text)
    if match is None:
        return None
    tokens = match.group(1).split()
    if not any(t in _USE_ENV for t in tokens):
        return None
    kept = [t for t in tokens if t not in _USE_ENV]
    return " ".join(["torchrun", *kept])


def _is_docstring(ctx: FileContext, node: cst.CSTNode) -> bool:
    parent = ctx.parent(node)
    return isinstance(parent, cst.Expr)


def _may_read_environ(node: cst.Call | cst.Subscript) -> bool:
    """Cheap pre-filter for `environ_key`: `x.environ[...]`, `x.get(...)`, `x.getenv(...)`."""
    if isinstance(node, cst.Subscript):
        return last_name(node.value) == "environ"
    return last_name(node.func) in ("get", "getenv")


def _is_prose(ctx: FileContext, node: cst.CSTNode) -> bool:
    """A string given as `help=` text or to print/logging/warnings: a mention, not a use."""
    arg = ctx.parent(node)
    if not isinstance(arg, cst.Arg):
        return False
    if arg.keyword is not None and arg.keyword.value in ("help", "description", "epilog"):
        return True
    call = ctx.parent(arg)
    return isinstance(call, cst.Call) and (last_name(call.func) or "") in _PROSE_CALLS


@register
class DeprecatedLaunch(Rule):
    code = "DDP022"
    name = "deprecated-distributed-launch"
    severity = Severity.INFO
    summary = "torch.distributed.launch / --local_rank argument: deprecated, use torchrun"
    requires_distributed = False
    explanation = """\
## What it does
Flags uses of the deprecated `torch.distributed.launch` launcher (an import, or a
`-m torch.distributed.launch` command in a string or argument list) and an argparse
`--local_rank` / `--local-rank` argument in a script that never reads `LOCAL_RANK` from the
environment.

## Why is this bad?
`torch.distributed.launch` is deprecated in favour of `torchrun`. Only the old launcher
passes `--local-rank=N` to the script; `torchrun` sets the `LOCAL_RANK` environment
variable instead. Under `torchrun` a `--local_rank` argument keeps its default on every
rank, so code that picks the GPU from it puts all ranks on the same device. (Scripts
launched by DeepSpeed, which does pass `--local_rank`, are left alone.)

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

An argument that the script never reads, or one kept next to a device taken from the
`LOCAL_RANK` environment variable (read by the script itself or by a project helper it
calls, such as `utils.init_distributed_mode(args)` in another file), is left alone. For a
`required=True` argument the message says what happens instead: under `torchrun` the
script stops at argument parsing.

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
        reads_local_rank_env = False
        for node in ctx.nodes_of(*_INSPECTED):
            if isinstance(node, (cst.Call, cst.Subscript)):
                if (
                    not reads_local_rank_env
                    and _may_read_environ(node)
                    and environ_key(ctx, node) == "LOCAL_RANK"
                ):
                    reads_local_rank_env = True
            elif isinstance(node, cst.Import):
                for alias in node.names:
                    if (dotted(alias.name) or "").startswith(_LAUNCH):
                        yield Finding(node, self._launch_message())
            elif isinstance(node, cst.ImportFrom):
                module = dotted(node.module) if node.module is not None else None
                if node.relative or module is None:
                    continue
                if module.startswith(_LAUNCH) or (
                    module == "torch.distributed"
                    and not isinstance(node.names, cst.ImportStar)
                    and any(dotted(a.name) == "launch" for a in node.names)
                ):
                    yield Finding(node, self._launch_message())
            elif isinstance(node, cst.SimpleString):
                if isinstance(ctx.parent(node), cst.ConcatenatedString):
                    continue
                yield from self._string(ctx, node)
            elif isinstance(node, cst.ConcatenatedString):
                if isinstance(ctx.parent(node), cst.ConcatenatedString):
                    continue
                value = string_value(node)
                if (
                    value
                    and _launch_in_text(value)
                    and not _is_docstring(ctx, node)
                    and not _is_prose(ctx, node)
                ):
                    yield Finding(node, self._launch_message())
            elif isinstance(node, cst.FormattedString):
                text = "".join(
                    p.value for p in node.parts if isinstance(p, cst.FormattedStringText)
                )
                if (
                    _LAUNCH_COMMAND.search(text)
                    and not _is_docstring(ctx, node)
                    and not _is_prose(ctx, node)
                ):
                    yield Finding(node, self._launch_message())
        if reads_local_rank_env or not ctx.facts.is_distributed:
            return  # the script reads LOCAL_RANK itself: the argument is only a fallback
        if _helper_reads_local_rank(ctx):
            return  # so does a project helper it calls (`utils.init_distributed_mode(args)`)
        if "deepspeed" in ctx.imports.bindings.values():
            return
        if any(v.startswith("deepspeed.") for v in ctx.imports.bindings.values()):
            return
        for call in ctx.method_calls("add_argument"):
            flags = {string_value(a.value) for a in call.args if a.keyword is None}
            if not flags & _LOCAL_RANK_FLAGS or not _value_is_read(ctx, call):
                continue  # a leftover argument nothing reads cannot misplace a device
            if _is_required(call):
                message = (
                    "`--local_rank` is required, but only the deprecated "
                    "torch.distributed.launch passes it; torchrun sets the LOCAL_RANK "
                    "environment variable instead, so under torchrun the script stops with "
                    "'the following arguments are required'"
                )
                fix = None
            else:
                message = (
                    "`--local_rank` is only passed by the deprecated torch.distributed.launch; "
                    "torchrun sets the LOCAL_RANK environment variable instead, so under "
                    "torchrun this argument keeps its default on every rank"
                )
                fix = self._argument_fix(ctx, call)
            yield Finding(call, message, fix=fix)

    @staticmethod
    def _launch_message() -> str:
        return "`torch.distributed.launch` is deprecated: use `torchrun`, which sets LOCAL_RANK"

    def _string(self, ctx: FileContext, node: cst.SimpleString) -> Iterator[Finding]:
        value = string_value(node)
        if not value or "torch.distributed.launch" not in value:
            return
        if not _launch_in_text(value) or _is_docstring(ctx, node) or _is_prose(ctx, node):
            return
        if value.strip() == _LAUNCH and not self._after_dash_m(ctx, node):
            return
        fix = None
        new = _rewritten_command(value)
        raw = node.raw_value
        if new is not None and raw == value and "r" not in node.prefix.lower():
            fix = FixSpec(
                "Launch with `torchrun`",
                replacements=((node, f"{node.prefix}{node.quote}{new}{node.quote}"),),
                applicability=Applicability.UNSAFE,
            )
        yield Finding(node, self._launch_message(), fix=fix)

    @staticmethod
    def _after_dash_m(ctx: FileContext, node: cst.SimpleString) -> bool:
        """A bare "torch.distributed.launch" element following "-m" in a list/tuple, or
        passed to runpy."""
        element = ctx.parent(node)
        container = ctx.parent(element) if element is not None else None
        if isinstance(container, (cst.List, cst.Tuple)):
            values = [e.value for e in container.elements]
            index = next((i for i, v in enumerate(values) if v is node), None)
            return index is not None and index > 0 and string_value(values[index - 1]) == "-m"
        if isinstance(element, cst.Arg):
            call = ctx.parent(element)
            return isinstance(call, cst.Call) and ctx.call_name(call) in ("runpy.run_module",)
        return False

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


def _int_literal(expr: cst.BaseExpression) -> str | None:
    """The source of an int literal, signed or not (`0`, `-1`), else None."""
    if isinstance(expr, cst.Integer):
        return expr.value
    if (
        isinstance(expr, cst.UnaryOperation)
        and isinstance(expr.operator, cst.Minus)
        and isinstance(expr.expression, cst.Integer)
    ):
        return f"-{expr.expression.value}"
    return None


def _helper_reads_local_rank(ctx: FileContext) -> bool:
    """The file calls a project helper that reads `LOCAL_RANK` from the environment."""
    project = ctx.project
    if project is None:
        return False
    return any(project.helper_reads_local_rank(ctx, call) for call in ctx.calls)


def _is_required(call: cst.Call) -> bool:
    required = keyword(call, "required")
    return (
        required is not None
        and isinstance(required.value, cst.Name)
        and (required.value.value == "True")
    )


def _dest(call: cst.Call) -> str:
    given = keyword(call, "dest")
    name = string_value(given.value) if given is not None else None
    return name or "local_rank"


def _value_is_read(ctx: FileContext, call: cst.Call) -> bool:
    """Whether the file reads the parsed value (`args.local_rank`, `getattr(args,
    "local_rank")`, `vars(args)`); an argument only declared is a leftover."""
    dest = _dest(call)
    for node in ctx.nodes_of(cst.Attribute, cst.Call):
        if isinstance(node, cst.Attribute):
            if node.attr.value == dest:
                return True
            if node.attr.value == "__dict__" and ctx.qualname(node.value) is None:
                return True  # `args.__dict__`, not a module's (`models.__dict__[args.arch]`)
        elif isinstance(node, cst.Call):
            called = last_name(node.func)
            if called == "vars":
                return True
            if (
                called == "getattr"
                and len(node.args) >= 2
                and string_value(node.args[1].value) == dest
            ):
                return True
    return False

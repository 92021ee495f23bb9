"""DDP014: a checkpoint written straight onto a path that is overwritten."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.analysis.checkpoints import (
    SAVE,
    file_name_varies,
    is_buffer,
    save_path,
)
from ddplint.analysis.paths import path_values
from ddplint.analysis.rank_guards import call_sites
from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.facts import last_name, string_value
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

_MOVES = frozenset({"os.replace", "os.rename", "shutil.move", "os.link"})
_UNIQUE_NAME = re.compile(
    r"(^|_)(epoch|epochs|ep|step|steps|global_step|iter|iters|iteration|it|idx|index|count|"
    r"counter|update|updates|time|timestamp|stamp|date|now|uuid|version|tag|nimg|kimg|i|e|n)"
    r"(_|$)",
    re.IGNORECASE,
)
_UNIQUE_CALLS = re.compile(r"time|now|strftime|uuid|datetime|mkstemp|NamedTemporaryFile")
_TEMP_TEXT = re.compile(r"tmp|temp|\.part\b|\.partial|~$", re.IGNORECASE)
_OVERWRITTEN_TEXT = re.compile(r"(^|[^a-z])(last|latest|best)([^a-z]|$)", re.IGNORECASE)


def _loop_ancestor(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode | None:
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.For, cst.While)):
            return ancestor
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
    return None


def _loop_targets(ctx: FileContext, node: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, cst.For):
            names.update(n.value for n in ctx.walk(ancestor.target) if isinstance(n, cst.Name))
        if isinstance(ancestor, cst.FunctionDef):
            break
    return names


def _counter_format(node: cst.CSTNode) -> bool:
    """`{step:06d}`: a number formatted as an integer, a counter in a file name."""
    if not isinstance(node, cst.FormattedStringExpression) or not node.format_spec:
        return False
    spec = "".join(p.value for p in node.format_spec if isinstance(p, cst.FormattedStringText))
    return spec.endswith("d")


def _unique_per_save(
    ctx: FileContext,
    values: list[tuple[cst.BaseExpression, cst.CSTNode]],
    at: cst.CSTNode,
    depth: int = 1,
) -> bool:
    """Some form of the path varies per save (epoch, step, a time stamp, a loop variable,
    a number formatted as `{n:06d}`), also through a name it is built from
    (`os.path.join(out, filename)`)."""
    for value, where in values:
        targets = _loop_targets(ctx, where) | _loop_targets(ctx, at)
        for node in ctx.walk(value):
            if _counter_format(node):
                return True
            if (
                depth > 0
                and node is not value
                and isinstance(node, cst.Name)
                and not isinstance(ctx.parent(node), cst.Attribute)
                and _unique_per_save(
                    ctx, [(v, where) for v in ctx.values_of(node.value, where)], at, depth - 1
                )
            ):
                return True
            if isinstance(node, cst.Call):
                callee = dotted(node.func) or ""
                if _UNIQUE_CALLS.search(callee):
                    return True
            if isinstance(node, cst.Name) and (
                node.value in targets or _UNIQUE_NAME.search(node.value)
            ):
                parent = ctx.parent(node)
                if isinstance(parent, cst.Attribute) and parent.value is not node:
                    # `args.epochs` reads an attribute: judge its last part below.
                    continue
                return True
            if isinstance(node, cst.Attribute) and _UNIQUE_NAME.search(node.attr.value):
                return True
    return False


def _nested_values(
    ctx: FileContext, values: list[tuple[cst.BaseExpression, cst.CSTNode]]
) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
    """Values of the names a path is built from (`os.path.join(out, name)`: `name`)."""
    found: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
    for value, where in values:
        for node in ctx.walk(value):
            if (
                node is not value
                and isinstance(node, cst.Name)
                and not isinstance(ctx.parent(node), cst.Attribute)
            ):
                found.extend((v, where) for v in ctx.values_of(node.value, where))
    return found


def _texts(ctx: FileContext, values: list[tuple[cst.BaseExpression, cst.CSTNode]]) -> list[str]:
    texts = []
    for value, _ in values:
        for node in ctx.walk(value):
            text = string_value(node) if isinstance(node, cst.BaseExpression) else None
            if text is not None:
                texts.append(text)
            elif isinstance(node, cst.FormattedStringText):
                texts.append(node.value)
    return texts


def _moved_after(ctx: FileContext, call: cst.Call, path: cst.BaseExpression) -> bool:
    """A later `os.replace(path, ...)` / `Path(path).replace(...)` in the same function."""
    scope = ctx.scope(call)
    path_code = ctx.code(path).strip()
    root = (dotted(path) or "").split(".")[0]
    for other in ctx.model.calls_by_frame(scope):
        if not ctx.before(call, other):
            continue
        name = ctx.call_name(other) or dotted(other.func) or ""
        method = last_name(other.func) if isinstance(other.func, cst.Attribute) else None
        if name in _MOVES:
            subject = other.args[0].value if other.args else None
        elif method in ("replace", "rename") and len(other.args) == 1:
            subject = other.func.value  # type: ignore[attr-defined]
        else:
            continue
        if subject is None:
            continue
        if ctx.code(subject).strip() == path_code:
            return True
        if root and root in set(ctx.names_in(subject)):
            return True
    return False


def _repeated_in_loop(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs more than once: inside a loop, and not under `if step == N:` (a test
    that holds at one iteration only)."""
    loop = _loop_ancestor(ctx, node)
    if loop is None:
        return False
    for ancestor in ctx.ancestors(node):
        if ancestor is loop:
            return True
        if isinstance(ancestor, cst.If) and _at_one_step(ancestor.test):
            return False
    return True


def _at_one_step(test: cst.BaseExpression) -> bool:
    """`step == save_step` (also inside `and`): true at one value of a counter."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _at_one_step(test.left) or _at_one_step(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    if not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    return any(_UNIQUE_NAME.search(last_name(side) or "") for side in sides)


def _called_in_loop(ctx: FileContext, func: cst.FunctionDef | None, depth: int = 2) -> bool:
    if func is None or depth == 0:
        return False
    for site in call_sites(ctx, func):
        if ctx.is_inside(site, func):
            continue
        if _repeated_in_loop(ctx, site):
            return True
        if _called_in_loop(ctx, ctx.enclosing_function(site), depth - 1):
            return True
    return False


@register
class NonAtomicCheckpoint(Rule):
    code = "DDP014"
    name = "non-atomic-checkpoint"
    severity = Severity.INFO
    summary = "Checkpoint saved straight onto a path that every save overwrites"
    explanation = """
## What it does
Flags a `torch.save(...)` that writes straight onto the final path of a checkpoint that is
overwritten: the same path saved repeatedly (in a loop, or by a helper called in a loop)
or a `last.pt` / `best.pt`-style name.

Left alone: a save to a temporary path moved into place afterwards (`os.replace`,
`os.rename`, `shutil.move`, `Path.replace`), per-save unique paths (an f-string holding the
epoch or step), and saves into an in-memory buffer.

## Why is this bad?
`torch.save` opens the target, truncates it and writes the new checkpoint into it. A crash,
preemption or full disk while it writes leaves a truncated file in place of the last good
checkpoint, and the resumed job fails to load it (or, worse, loads partial state from an
older format). Writing to a temporary file and renaming it over the target replaces the file
in one step on POSIX file systems: the path always holds a complete checkpoint.

## Example
```python
for epoch in range(epochs):
    train_one_epoch(model, loader, optimizer)
    if rank == 0:
        torch.save(model.module.state_dict(), "last.pt")
```

## Use instead
```python
for epoch in range(epochs):
    train_one_epoch(model, loader, optimizer)
    if rank == 0:
        torch.save(model.module.state_dict(), "last.pt.tmp")
        os.replace("last.pt.tmp", "last.pt")
```

## Fix safety
No automatic fix: the temporary name must live on the same file system as the target.

## References
- https://docs.python.org/3/library/os.html#os.replace
- https://pytorch.org/docs/stable/generated/torch.save.html
"""
    flag = (
        """import torch
import torch.distributed as dist

def train(model, epochs, rank):
    for epoch in range(epochs):
        if rank == 0:
            torch.save(model.module.state_dict(), "checkpoint.pt")
        dist.barrier()
""",
        """import os
import torch
import torch.distributed as dist

def save_checkpoint(state, out_dir, filename="checkpoint.pth.tar"):
    torch.save(state, os.path.join(out_dir, filename))

def main(args, model):
    for epoch in range(args.epochs):
        if dist.get_rank() == 0:
            save_checkpoint({"model": model.module.state_dict()}, args.output_dir)
""",
        """import torch
import torch.distributed as dist

def maybe_save_best(model, acc, best, out):
    if dist.get_rank() == 0 and acc > best:
        torch.save(model.module.state_dict(), f"{out}/best.pt")
""",
    )
    allow = (
        """import os
import torch
import torch.distributed as dist

def train(model, epochs, ckpt):
    for epoch in range(epochs):
        if dist.get_rank() == 0:
            tmp = ckpt + ".tmp"
            torch.save(model.module.state_dict(), tmp)
            os.replace(tmp, ckpt)
        dist.barrier()
""",
        """import torch
import torch.distributed as dist

def train(model, epochs, out_dir):
    for epoch in range(epochs):
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), f"{out_dir}/epoch_{epoch:03d}.pt")
        dist.barrier()
""",
        """import io
import torch
import torch.distributed as dist

def broadcast_state(model, epochs):
    for epoch in range(epochs):
        buffer = io.BytesIO()
        torch.save(model.module.state_dict(), buffer)
        payload = [buffer.getvalue()]
        dist.broadcast_object_list(payload, src=0)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for call in ctx.calls_to(SAVE):
            path = save_path(call)
            if path is None or is_buffer(ctx, path, call):
                continue
            values = path_values(ctx, path, call)
            if any(isinstance(v, (cst.Call)) and _is_file_object(ctx, v) for v, _ in values):
                continue
            texts = _texts(ctx, values + _nested_values(ctx, values))
            if any(_TEMP_TEXT.search(t) for t in texts) or _moved_after(ctx, call, path):
                continue
            named = any(_OVERWRITTEN_TEXT.search(t.rsplit("/", 1)[-1]) for t in texts)
            # A `latest` / `best` name is overwritten whatever else it holds (`{tag}`).
            if _unique_per_save(ctx, values, call, depth=0 if named else 1):
                continue
            repeated = _repeated_in_loop(ctx, call) or _called_in_loop(
                ctx, ctx.enclosing_function(call)
            )
            if not (repeated or named):
                continue
            shown = ctx.code(path).strip()
            if len(shown) > 40:
                shown = shown[:37] + "..."
            if any(file_name_varies(ctx, v) for v, _ in values) and not named:
                what = (
                    "a checkpoint path a later save may write again (ddplint cannot tell "
                    "whether its name changes between saves)"
                )
            else:
                what = "a checkpoint path every save overwrites"
            yield Finding(
                call,
                f"`torch.save` writes straight onto `{shown}`, {what}: a crash or preemption "
                "mid-write leaves a truncated file where the last good checkpoint was; save "
                "to a temporary file, then `os.replace()` it onto the final path",
            )


def _is_file_object(ctx: FileContext, value: cst.Call) -> bool:
    """`open(...)` or a file object: the caller manages the file, leave it alone."""
    name = ctx.call_name(value) or dotted(value.func) or ""
    return name in ("open", "io.open") or name.endswith(".open")

"""DDP014: a checkpoint written straight onto a path that is overwritten."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.checkpoints import SAVE, file_name_varies, is_buffer, save_path, saves_state
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp014_non_atomic_checkpoint.overwrites import (
    from_atomic_writer,
    is_temporary,
    item_loops,
    moved_after,
    names_overwritten_file,
    path_texts,
    repeats,
    varies_per_save,
    walked_paths,
    written_path,
)


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
or a `last.pt` / `best.pt`-style name. A save into a file object opened for writing
(`with open(path, "wb") as f:`, a path manager's `open(path, "wb")`) is judged by the path
opened; a loop over a list of paths (`for p in paths:`) by the paths of the list.

Left alone: a save to a temporary path moved into place afterwards (`os.replace`,
`os.rename`, `shutil.move`, `Path.replace`, or a context manager named for it: `with
write_and_rename(path) as tmp:`, `with atomic_write(path) as f:`), per-save unique paths (an
f-string holding the epoch or step, also through the names and folders it is built from),
saves into an in-memory buffer, file objects opened to append or with an unknown mode, and
saves that happen once per run: at one configured step (`if step == save_step:`, or after
`if step != save_step: return`), right before the process exits (`quit()`, `sys.exit()`,
`raise SystemExit` after the save, with no way round the loop in between), or outside the
training loop of a function that a hyper-parameter search calls once per run. Also left
alone: files that hold no training state (a tensor dump, predictions, a metrics history, by
the name of what is saved, when nothing it holds names a model, optimizer or
`state_dict()`), a dataset's per-sample cache, and a file per item of a loop that runs once
per run (a conversion writing each tensor or shard to its own file).

Proven, and reported by default: a save that repeats in sight (a loop of its function, or
a helper called in a loop of the same file). Unproven, shown under `--preview`: a
`last`/`best` name written once as far as ddplint sees (a final export, a branch that only
some caller may take, or a helper whose callers are in other files).

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
            if path is None or is_buffer(ctx, path, call) or not saves_state(ctx, call):
                continue
            if from_atomic_writer(ctx, path, call):
                continue  # `with write_and_rename(final) as tmp:` renames it into place
            written = written_path(ctx, path, call)
            if written is None:
                continue  # a file object the caller opened otherwise
            path, at = written
            walked = walked_paths(ctx, path, at)
            if walked is not None:  # `for p in paths:`: the first path no save changes
                path, at = next(
                    ((p, where) for p, where in walked[1] if not varies_per_save(ctx, p, where)),
                    (path, at),
                )
            values = [v.expr for v in ctx.resolver.values(path, at)]
            texts = path_texts(ctx, path, at)
            if is_temporary(texts) or moved_after(ctx, call, path):
                continue
            named = names_overwritten_file(texts)
            # A `latest` / `best` name is overwritten whatever its folder or run tag holds:
            # only the path expression itself may vary (`f"best_{epoch}.pt"`).
            if varies_per_save(ctx, path, at, depth=None if named else 3):
                continue
            loops = item_loops(ctx, path, at) | ({walked[0]} if walked is not None else set())
            repeated = repeats(ctx, call, walking=loops)
            if not (named or repeated):
                continue
            shown = ctx.code(path).strip()
            if len(shown) > 40:
                shown = shown[:37] + "..."
            name_unknown = not (named or loops) and any(file_name_varies(ctx, v) for v in values)
            if name_unknown:
                what = (
                    "a checkpoint path a later save may write again (ddplint cannot tell "
                    "whether its name changes between saves)"
                )
            else:
                what = "a checkpoint path every save overwrites"
            # Proven: a save that repeats in sight. A `last`/`best` name written once in
            # sight (a final export, a branch no caller may take) rests on its name alone:
            # unproven.
            yield Finding(
                call,
                f"`torch.save` writes straight onto `{shown}`, {what}: a crash or preemption "
                "mid-write leaves a truncated file where the last good checkpoint was; save "
                "to a temporary file, then `os.replace()` it onto the final path",
                unproven=not repeated,
            )

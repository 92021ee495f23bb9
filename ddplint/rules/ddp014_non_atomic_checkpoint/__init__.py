"""DDP014: a checkpoint written straight onto a path that is overwritten."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.call_values import per_call
from ddplint.domain.checkpoint_writes import (
    Write,
    backed_up_call,
    backed_up_write,
    file_name_patterns,
    file_names,
    folder_pieces,
    is_false_literal,
    names_it,
    names_unresumed_file,
    passes_value,
    read_back_by_helper,
    read_back_by_twin,
    reads_back,
    resumed_from_newest,
    resumes_from_given_path,
    writer_names_unresumed,
    writes,
)
from ddplint.domain.checkpoints import SAVE, file_name_varies
from ddplint.domain.ddp_facts import string_value
from ddplint.domain.overwrites import (
    from_atomic_writer,
    is_temporary,
    item_loops,
    moved_after,
    named_piece_computed,
    names_overwritten_file,
    path_texts,
    repeats,
    repeats_in_call,
    varies_per_save,
    walked_paths,
    written_path,
)
from ddplint.domain.project_view import project_of
from ddplint.domain.run_constants import same_every_round
from ddplint.domain.saved_values import saved_keys, saves_data
from ddplint.domain.written_files import HelperWrite
from ddplint.engine import argument_for
from ddplint.rule import Finding, Rule, register


@register
class NonAtomicCheckpoint(Rule):
    code = "DDP014"
    name = "non-atomic-checkpoint"
    severity = Severity.INFO
    needs_several = False  # a crash truncates the write in one process too
    summary = "Checkpoint saved straight onto a path that every save overwrites"
    explanation = """
## What it does
Flags a `torch.save(...)` that writes straight onto the final path of a checkpoint that is
overwritten: the same path saved repeatedly (in a loop, or by a helper called in a loop)
or a `last.pt` / `best.pt`-style name. A save into a file object opened for writing
(`with open(path, "wb") as f:`, a path manager's `open(path, "wb")`) is judged by the path
opened; a loop over a list of paths (`for p in paths:`) by the paths of the list. A copy
of a file a `torch.save` of the same function has just written (`shutil.copyfile(path,
"current.pth")`) rewrites its target in place too, but the file it copies stays intact, so
a torn copy loses no checkpoint (a restart that reads the copy stops until that file is
named by hand): copies are reported with `--preview` only. A call, repeated in sight, of a helper
of another project module that writes such a path (`utils.save_checkpoint(state, out)`,
or `keeper.save(state, path)` on an object a project class made) is reported at the call,
with the arguments it passes deciding the path: a file name the helper picks itself only
when none is passed (`if filename is None: filename = f"ckpt_{epoch}.pth"`) is the
caller's when it passes one, a write that runs only when the caller passes none (`if
filename is None: write(join(out, "checkpoint.pth"))`) is not that of a call naming its
own file (`save(epoch, filename=f"checkpoint-ep{epoch}.pth")`), and a helper that names
the file and hands it to another
function of its module (`self.save_checkpoint(join(out, "checkpoint.pth"))`) writes it.
A save helper of this file whose path is built from its parameters is judged once per call
in sight, with that call's arguments: `save(model, f"ckpt-{step}")` in the loop and
`save(model, "final-" + str(acc))` once at the end write different files, and neither is
reported; a `last` / `best` name whose own piece holds a step counter (`"best-{}".format(
epoch)`) names a file per save.
A file name that changes per save is reported too when the script resumes from the newest
file of that name by itself
(`sorted(glob("epoch_*.pt"))[-1]` handed to a load): the file a crash truncates is the one
the next start loads. A file the listing's pattern does not match (`model_{step}.pth`
beside a resume from `ckpt_*.pth` in the same folder) is not, and a listing in code that
may never run (a private `_load_state` method nothing calls) makes the finding unproven.

Left alone: a save to a temporary path moved into place afterwards (`os.replace`,
`os.rename`, `shutil.move`, `Path.replace`, a shell `mv` of the same path through
`os.system` or `subprocess`, or a context manager named for it: `with
write_and_rename(path) as tmp:`, `with atomic_write(path) as f:`), per-save unique paths (an
f-string holding the epoch or step, also through the names and folders it is built from,
or a time stamp taken at each save; a run folder stamped once, before the loop, is one
folder for every save, and so is any value computed once per process before the loop,
whatever its words say: `ckpt = f"pretrain-{epochs}.pth"` before the epoch loop, a
`config.log_dir` stamped with the time by the option parser),
saves into an in-memory buffer, file objects opened to append or with an unknown mode, and
saves that happen once per run or per call (followed by a `return`, or by the `break` of a
retry loop): at one configured step (`if step == save_step:`, or after
`if step != save_step: return`), right before the process exits (`quit()`, `sys.exit()`,
`raise SystemExit` after the save, with no way round the loop in between), right before an
exception that no `try` in sight catches and carries on from (a debug dump of the batch
and weights before `raise RuntimeError("loss is NaN")`: written at most once per process,
and read by no resume), or outside the
training loop of a function that a hyper-parameter search calls once per run. Also left
alone: files that hold no training state (a tensor dump, predictions, a metrics history, by
the name of what is saved, when nothing it holds names a model, optimizer or
`state_dict()`), a dataset's per-sample cache, and a file per item of a loop that runs once
per run (a conversion writing each tensor or shard to its own file).

Proven, and reported by default: a save, a copy, or a helper of another module called in
a loop, that rewrites the file the script reads back to resume from: a `torch.load` or
`load_checkpoint` / `resume` call of the same file names it, a resume helper of another
module loads a file of that name (`resume_if_possible(out)` reading `join(out,
"checkpoint.pth")`), or the script resumes from a path the user gives (`torch.load(
args.resume)`; a load of an option's path from which the optimizer's state or the start
epoch is restored) and the file is one a user resumes from (not a `best`, `final` or
export file). A load that starts from another run's weights (a path named for
pretrained, teacher or initial weights: `args.pretrained_model_path / "best.pth"`)
resumes nothing, nor does a load after the last training loop of its function (the best
weights read back for an export or a final test). Unproven, shown under `--preview`: a
repeated save of a file nothing in sight reads back (best weights, an export: losing one
costs the weights of one save, not the run), a resumed file whose state the same round
also saves to a file of its own name (`epoch_{n}.pt` before or after `latest.pt`, every
round or every k-th, directly, through the same helper of this file, or as a copy: a
restart can fall back on it), and a `last`/`best` name written once as far as ddplint
sees (a final export, a branch that only some caller may take, or a helper whose callers
are in other files).

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
        for write in writes(ctx):
            finding = self._own_write(ctx, write)
            if finding is not None:
                yield finding
        project = project_of(ctx)
        if project is None:
            return
        for call in ctx.calls:
            if not call.args or ctx.call_name(call) in _NOT_HELPERS:
                continue
            found = [_helper_write(ctx, call, h) for h in project.helper_writes(ctx, call)]
            # One finding a call: a proven one first (a save onto the file resumed from).
            yield from sorted(filter(None, found), key=lambda f: f.unproven)[:1]

    def _own_write(self, ctx: FileContext, write: Write) -> Finding | None:
        """A `torch.save` of this file, or a copy of the file one writes."""
        call, path = write.call, write.path
        if from_atomic_writer(ctx, path, call):
            return None  # `with write_and_rename(final) as tmp:` renames it into place
        written = written_path(ctx, path, call)
        if written is None:
            return None  # a file object the caller opened otherwise
        path, at = written
        walked = walked_paths(ctx, path, at)
        if walked is not None:  # `for p in paths:`: the first path no save changes
            path, at = next(
                ((p, where) for p, where in walked[1] if not varies_per_save(ctx, p, where)),
                (path, at),
            )
        if is_temporary(path_texts(ctx, path, at)) or moved_after(ctx, call, path):
            return None
        loops = {walked[0]} if walked is not None else set()
        calls = per_call(ctx, path, at)
        if calls is None:
            return _judged(ctx, write, path, at, [(path, at)], loops, None)
        # A path built from its function's parameters: each call in sight writes the
        # path its own arguments make (`save(model, f"ckpt-{step}")` in one place and
        # `save(model, "last")` once at the end are two different judgements).
        func, sites = calls
        many = len(sites) > 1
        found = [
            _judged(
                ctx,
                write,
                path,
                at,
                [(path, at), *site.bound],
                loops,
                (func, site.site, many),
                backed_up_call(ctx, site, sites),
            )
            for site in sites
        ]
        return min(filter(None, found), key=lambda f: f.unproven, default=None)


def _judged(
    ctx: FileContext,
    write: Write,
    path: cst.BaseExpression,
    at: cst.CSTNode,
    parts: list[tuple[cst.BaseExpression, cst.CSTNode]],
    loops: set[cst.For],
    caller: tuple[cst.FunctionDef, cst.Call, bool] | None,
    call_backed_up: bool = False,
) -> Finding | None:
    """`write` onto `path` with the value made of `parts` (the path, and what one call of
    its function binds to the parameters it is built from: `caller`, with whether the
    message names that call; or the path as any caller makes it). `call_backed_up`: that
    call's state is saved in the same round to a file of its own (`backed_up_call`)."""
    call = write.call
    within = caller[0] if caller is not None else None
    texts = [t for expr, where in parts[1:] for t in path_texts(ctx, expr, where)]
    texts += path_texts(ctx, path, at, within=within)
    if within is not None:  # the defaults of its parameters: `parts` holds what the call binds
        params = within.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            for piece in path_texts(ctx, param.default, within) if param.default else ():
                if piece in texts:
                    texts.remove(piece)
    if is_temporary(texts):
        return None
    named = names_overwritten_file(texts)
    # A `latest` / `best` name is overwritten whatever its folder or run tag holds:
    # only the path expression itself may vary (`f"best_{epoch}.pt"`).
    depth = None if named else 3
    if any(
        varies_per_save(ctx, expr, where, depth, within=within if i == 0 else None, passed=i > 0)
        for i, (expr, where) in enumerate(parts)
    ):
        names = file_name_patterns(ctx, path, at) if caller is None else None
        return _newest(ctx, call, write.verb, ctx.code(path), texts, names)
    for i, (expr, where) in enumerate(parts):
        found = item_loops(ctx, expr, where)
        if i == 0 and within is not None:  # its callers' loops: what each call passes
            found = {loop for loop in found if ctx.is_inside(loop, within)}
        loops = loops | found
    if caller is None:
        repeated = repeats(ctx, call, walking=loops)
    else:
        repeated = repeats_in_call(ctx, call, caller[1], walking=loops)
    if not (named or repeated):
        return None
    if not repeated and any(named_piece_computed(ctx, expr, where) for expr, where in parts):
        return None  # `"checkpoints-last-" + str(acc)` written once: this run's own file
    shown = _shown(ctx.code(path))
    values = [v for expr, where in parts for v in ctx.resolver.values(expr, where)]
    name_unknown = not (named or loops) and any(
        file_name_varies(ctx, v.expr) and not same_every_round(ctx, v.at) for v in values
    )
    source = write.copied or call
    saved = saved_keys(ctx, source.args[0].value, source) if source.args else None
    resumed, reader = (
        _resumed_from(ctx, texts, call, saved, _spelled_folders(ctx, path))
        if repeated
        else (None, None)
    )
    if write.copied is not None:
        # A copy: the file it copies stays intact (`_copies`).
        return Finding(
            call,
            _message(write.verb, f"`{shown}`", resumed),
            unproven=True,
            runs_with=_entry_of(ctx, reader),
        )
    # Proven: a save that repeats in sight onto the file the run resumes from. A file
    # nothing in sight reads back (best weights, an export) costs the weights of one save
    # at worst, and one whose state is also saved to a file of its own costs little; a
    # `last`/`best` name written once in sight rests on its name alone: all unproven.
    backed_up = resumed is not None and (call_backed_up or backed_up_write(ctx, write))
    resumed = None if backed_up else resumed
    backup = (
        " (the same state also goes to a file of its own name, at every save or at some of "
        "them, which a restart can fall back on)"
    )
    if not repeated:
        what = (
            "a `last`/`best`-style checkpoint name, overwritten whenever it is saved again "
            "(ddplint sees one save per run)"
        )
    elif name_unknown:
        what = (
            "a checkpoint path a later save may write again (ddplint cannot tell "
            "whether its name changes between saves)"
        )
        if resumed or backed_up:
            what += ", of the kind this script reads back to resume from"
        what += backup if backed_up else ""
    elif backed_up:
        what = "the checkpoint this script resumes from, overwritten at every save" + backup
    elif not resumed:
        what = "a checkpoint path every save overwrites (no load in sight was matched to it)"
    else:
        what = f"{resumed}, overwritten at every save"
    if caller is not None and caller[2]:  # the call (of several) whose arguments make it
        shown += f"` (through `{_shown(' '.join(ctx.code(caller[1]).split()))}`)"
    else:
        shown += "`"
    return Finding(
        call,
        f"`torch.save` writes straight onto `{shown}, {what}: {_HARM}",
        unproven=resumed is None,
        runs_with=_entry_of(ctx, reader),
    )


# How a written file is known to be resumed from (`_resumed_from`).
_READ_BACK = "the checkpoint this script reads back to resume from"


def _resumed_from(
    ctx: FileContext,
    texts: list[str],
    write: cst.Call | None = None,
    saved: frozenset[str] | None = None,
    folders: tuple[str, ...] = (),
) -> tuple[str | None, cst.Call | None]:
    """How a load of this file reads the file whose path has the pieces `texts` back,
    said for a message, with the call that reads it (the finding holds only where that
    call's function can run: `_entry_of`); (None, None) when
    none does. By its name (naming a best or final file's folder too), through a project
    helper, or from the path a resume option names (not where the function writing it,
    `write`'s, is named for best or exported weights, nor where the file lacks a key that
    resume reads: `saved`, the keys written, when in sight). `folders`: the folders the
    written path spells out itself (`_spelled_folders`), which a read by name must hold."""
    names = file_names(texts)
    unresumed = names_unresumed_file(texts)
    read = reads_back(ctx, names, folders, write)
    if read is not None and (not unresumed or names_it(ctx, read, texts)):
        return _READ_BACK, read  # a `best_model/state.pt` is not the `state.pt` a resume reads
    if unresumed or (write is not None and writer_names_unresumed(ctx.enclosing_function(write))):
        return None, None
    helper = read_back_by_helper(ctx, names)
    if helper is not None:
        return _READ_BACK, helper
    given = resumes_from_given_path(ctx, texts, saved)
    if given is None:
        return None, None
    option = f" (`{_shown(ctx.code(given.args[0].value))}`)" if given.args else ""
    return f"a checkpoint of the kind this script resumes from, given its path{option}", given


def _spelled_folders(ctx: FileContext, path: cst.BaseExpression) -> tuple[str, ...]:
    """The folders the path expression spells out in its own string literals
    (`join("/content/drive/MyDrive/", "G_latest.pth")`), not through the names it reads."""
    return folder_pieces(
        [
            text
            for node in ctx.walk(path)
            if type(node) is cst.SimpleString and (text := string_value(node)) is not None
        ]
    )


def _entry_of(ctx: FileContext, reader: cst.Call | None) -> tuple[cst.CSTNode, ...]:
    """What must run for `reader` to be callable at all: the first statement of its
    function (a resume method nothing calls reads nothing back). Not the reader itself:
    it runs under the resume option, which a run sets only after a crash."""
    func = ctx.enclosing_function(reader) if reader is not None else None
    if func is None or type(func.body) is not cst.IndentedBlock or not func.body.body:
        return ()
    return (func.body.body[0],)


# Library calls that never reach a project helper's saves.
_NOT_HELPERS = frozenset({SAVE, "torch.load"})
_HARM = (
    "a crash or preemption mid-write leaves a truncated file where the last good checkpoint "
    "was; save to a temporary file, then `os.replace()` it onto the final path"
)
_COPY_HARM = (
    "a crash or preemption mid-copy leaves it truncated, and a restart that reads it fails "
    "until the intact file it copies is named by hand; copy to a temporary file, then "
    "`os.replace()` it onto the final path"
)


def _shown(code: str) -> str:
    shown = code.strip()
    return shown if len(shown) <= 40 else shown[:37] + "..."


def _message(verb: str, shown: str, resumed: str | None) -> str:
    if resumed == _READ_BACK:
        what = "the checkpoint file this script reads back to resume from"
    else:
        what = resumed or "a checkpoint path every call overwrites"
    if _copies(verb):
        return f"{verb} writes straight onto {shown}, {what}: {_COPY_HARM}"
    return f"{verb} writes straight onto {shown}, {what}: {_HARM}"


def _copies(verb: str) -> bool:
    """The write is a copy of a file just saved (`shutil.copyfile`), directly or inside a
    helper: that file stays intact, so a torn copy loses no checkpoint. The harm is a
    restart that stops on the truncated copy until the intact file is named by hand:
    reported in `--preview` only."""
    return "shutil" in verb


def _newest(
    ctx: FileContext,
    call: cst.Call,
    verb: str,
    path: str,
    texts: list[str],
    names: set[str] | None = None,
) -> Finding | None:
    """A write under a name that changes per save (named `names` where known), in a script
    that resumes from the newest file of that name by itself: the truncated file of a crash
    is the one loaded."""
    listing = resumed_from_newest(ctx, texts, names)
    if listing is None or not repeats(ctx, call):
        return None
    how = "copy" if _copies(verb) else "save"
    return Finding(
        call,
        f"{verb} writes each checkpoint straight onto its final name `{_shown(path)}`, and "
        f"this script resumes from the newest such file by itself (`{_shown(ctx.code(listing))}`"
        "): a crash or preemption mid-write leaves a truncated newest file that the next "
        f"start loads; {how} to a temporary file, then `os.replace()` it onto the final path",
        unproven=_copies(verb),
        rests_on=(listing,),  # a resume in a method nothing calls: maybe no resume at all
    )


def _helper_write(ctx: FileContext, call: cst.Call, helper: HelperWrite) -> Finding | None:
    """`call` runs a helper of another module that writes `helper`'s path: a finding when
    the call repeats in sight and nothing it passes makes the path change per call."""
    if any(arg.star for arg in call.args):
        return None
    if helper.saved_param is not None:
        saved = argument_for(call, helper.saved_param)
        if saved is not None and saves_data(ctx, saved, call):
            return None
    if helper.fallback is not None and argument_for(call, helper.fallback) is None:
        return None  # left out: the helper names a fresh file per call
    if passes_value(call, helper.unless):
        return None  # `save(filename=...)`: the other branch of `if filename is None:`
    for name, position, false_default in helper.requires:
        passed = argument_for(call, (name, position))
        if is_false_literal(passed) or (passed is None and false_default):
            return None  # `save_checkpoint(state, False, ...)`: the write never runs
    texts = helper.texts_passing(
        *(p[0] for p in helper.path_params if argument_for(call, p) is not None)
    )
    paths, passed_names = [], []
    for name, position in helper.path_params:
        passed = argument_for(call, (name, position))
        if passed is None:
            continue  # its default, part of `helper.texts`
        passed_texts = path_texts(ctx, passed, call)
        if is_temporary(passed_texts):
            return None
        if varies_per_save(ctx, passed, call):
            callee = f"`{_shown(ctx.code(call.func))}(...)` ({helper.verb} inside it)"
            return _newest(ctx, call, callee, ctx.code(passed), [*helper.texts, *passed_texts])
        if item_loops(ctx, passed, call):
            return None  # a file per item of a loop
        texts += passed_texts
        paths.append(passed)
        passed_names.append(name)
    if is_temporary(texts) or not repeats(ctx, call):
        return None
    names = file_names(texts)
    written = argument_for(call, helper.saved_param) if helper.saved_param is not None else None
    keys = saved_keys(ctx, written, call) if written is not None else None
    folders = tuple(folder for p in paths for folder in _spelled_folders(ctx, p))
    resumed, reader = _resumed_from(ctx, texts, call, saved=keys, folders=folders)
    if resumed is None and not folders:
        reader = read_back_by_twin(ctx, call, paths)
        resumed = _READ_BACK if reader is not None else None
    if resumed is None and names_overwritten_file(list(helper.texts)):
        return None  # a `best.pth` of the helper's own: its module reports the save
    shown = f"`{_shown(helper.shown)}`"
    if len(paths) == 1 and passed_names == [helper.shown]:
        shown = f"`{_shown(ctx.code(paths[0]))}`"  # `save(model, path)`: the path passed
    elif len(names) == 1:
        shown = f"`{next(iter(names))}`"  # `checkpoint.pth` of `join(out_dir, filename)`
    elif paths:
        shown += " (from " + ", ".join(f"`{_shown(ctx.code(p))}`" for p in paths) + ")"
    callee = _shown(ctx.code(call.func))
    message = _message(f"`{callee}(...)` ({helper.verb} inside it)", shown, resumed)
    if resumed is not None and helper.backed_up:
        message += (
            " (unproven: the helper also saves the same state to a file of its own name "
            "per save, which a restart can fall back on)"
        )
    return Finding(
        call,
        message,
        unproven=resumed is None or _copies(helper.verb) or helper.backed_up,
        runs_with=_entry_of(ctx, reader),
    )

"""Checkpoint writes: `torch.save` into a file, and a copy of a file a `torch.save` of the
same function has just written (`shutil.copyfile(filename, "model_best.pth")`), which
rewrites its target in place just the same. For a function, the writes whose path does not
change within it (`helper_writes`), so that its callers in other modules can tell whether
their calls overwrite one file; and whether a file reads a written file back
(`reads_back`, `read_back_by_twin`) or the newest file of its name (`resumed_from_newest`):
the run resumes from it."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.call_values import Call
from ddplint.domain.checkpoints import SAVE, is_buffer, save_path, saves_state
from ddplint.domain.ddp_facts import last_name, string_value
from ddplint.domain.loops import named_for
from ddplint.domain.overwrites import (
    at_one_step,
    exits_after,
    from_atomic_writer,
    is_temporary,
    moved_after,
    path_texts,
    raises_after,
    round_loop,
    scoped,
    varies_per_save,
    written_path,
)
from ddplint.domain.project_view import project_of
from ddplint.domain.resume_loads import READER, RESUMER, from_another_run, keys_read, resumes
from ddplint.domain.unpassed_parameters import needs_unpassed_argument
from ddplint.domain.written_files import HelperWrite
from ddplint.engine import argument, argument_for
from ddplint.engine.dead_code import exclusive, never_runs
from ddplint.engine.model import parameter_positions
from ddplint.names import dotted

COPIES = frozenset({"shutil.copy", "shutil.copyfile", "shutil.copy2"})
_EXTENSION = re.compile(r"^\.?[A-Za-z0-9]{1,5}$")  # `.pt`, `pth`: no name of its own
_HAS_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
# A name for the file to resume from (`args.resume`, `cfg.resume_from`, `resume_path`).
_RESUME_OPTION = re.compile(r"(?i)resum")
# File names a run resumes from (`checkpoint.pth.tar`, `ckpt_last.pth`, `latest.pt`), and
# those nobody resumes a run from: the best weights, a final export.
_RESUMED_FROM = re.compile(r"(?i)checkpoint|ckpt|last|latest|current|resume|snapshot|state")
# A best, final or exported file, or one named for the metric that picks it
# (`checkpoint_nll.pt`, `model_fid.pth`, `ckpt-miou.pt`): best-by-metric weights.
_NOT_RESUMED_FROM = re.compile(
    r"(?i)best|final|export|deploy|pretrained"
    r"|(?:^|[_.-])(?:nll|fid|loss|acc|accuracy|psnr|ssim|bleu|rouge|miou|auc|f1|wer|cer|top1)"
    r"(?=[_.-]|$)"
)
# The words of those that also mark a folder (`best_model/state.pt`); `pretrain_gpt2/` is a
# task's folder, not a file of pretrained weights.
_NOT_RESUMED_FOLDER = re.compile(r"(?i)best|final")
# Names of functions that write such files (`save_best_model`, `export_onnx`).
_NOT_RESUMED_WRITER = re.compile(r"(?i)best|final|export|deploy")


@dataclass(frozen=True)
class Write:
    """A checkpoint write: the call, the path it writes, how (`verb`, for messages), and
    for a copy the save it copies."""

    call: cst.Call
    path: cst.BaseExpression
    verb: str
    copied: cst.Call | None = None


def writes(ctx: FileContext) -> tuple[Write, ...]:
    """The `torch.save` calls into a file that may hold training state, and the copies of
    the files they write (`COPIES`) made after them in the same function onto a path that
    names a file (`model_best.pth`, not a folder); found once per file."""
    return ctx.memo(_all_writes)


def _all_writes(ctx: FileContext) -> tuple[Write, ...]:
    return tuple(_find_writes(ctx))


def _writes_by_scope(ctx: FileContext) -> dict[cst.CSTNode, list[Write]]:
    """`writes(ctx)` by the function or module each call lies in."""
    found: dict[cst.CSTNode, list[Write]] = {}
    for write in writes(ctx):
        found.setdefault(ctx.scope(write.call), []).append(write)
    return found


def _find_writes(ctx: FileContext) -> Iterator[Write]:
    saves = []
    for call in ctx.calls_to(SAVE):
        path = save_path(call)
        if path is None or is_buffer(ctx, path, call) or not saves_state(ctx, call):
            continue
        saves.append((call, path))
        yield Write(call, path, "`torch.save`")
    if not saves:
        return
    for copy in ctx.calls_to(*COPIES):
        source, target = argument(copy, 0, "src"), argument(copy, 1, "dst")
        if source is None or target is None:
            continue
        copied = next((s for s, p in saves if _same_file(ctx, p, s, source, copy)), None)
        names = file_names(path_texts(ctx, target, copy))
        if not any(_HAS_EXTENSION.search(n) for n in names):
            continue  # into a folder (`shutil.copy(path, backup_dir)`), or a name unseen
        if copied is not None:
            name = (ctx.call_name(copy) or "shutil.copy").rpartition(".")[2]
            yield Write(copy, target, f"`shutil.{name}`", copied)


def _same_file(
    ctx: FileContext,
    saved: cst.BaseExpression,
    save: cst.Call,
    source: cst.BaseExpression,
    copy: cst.Call,
) -> bool:
    """The copy's source is the path the save wrote, earlier in the same function."""
    if ctx.scope(save) is not ctx.scope(copy) or not ctx.before(save, copy):
        return False
    return ctx.code(saved).strip() == ctx.code(source).strip() or (
        dotted(saved) is not None and dotted(saved) == dotted(source)
    )


def overwritten(
    ctx: FileContext,
    write: Write,
    skip: cst.CSTNode | None = None,
    within: cst.FunctionDef | None = None,
) -> tuple[cst.BaseExpression, cst.CSTNode] | None:
    """The path `write` writes and where it is evaluated, when nothing in sight makes it a
    fresh or temporary file (a counter or time stamp in it, a rename into place, an atomic
    writer; `skip`, `within`: as `overwrites.scoped`); None otherwise."""
    if from_atomic_writer(ctx, write.path, write.call):
        return None
    written = written_path(ctx, write.path, write.call)
    if written is None:
        return None
    path, at = written
    if is_temporary(path_texts(ctx, path, at, skip, within)) or moved_after(ctx, write.call, path):
        return None
    return None if varies_per_save(ctx, path, at, skip=skip, within=within) else (path, at)


def _fallbacks(
    ctx: FileContext, func: cst.FunctionDef, write: Write
) -> Iterator[tuple[str, cst.If]]:
    """The parameters of `func` defaulting to None that, when a caller leaves them out,
    get a value of `func`'s own before `write`, and only then (`if filename is None:
    filename = f"ckpt_{epoch}.pth"`), each with that `if`."""
    params = (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
    for param in params:
        if not (type(param.default) is cst.Name and param.default.value == "None"):
            continue
        name = param.name.value
        bindings = ctx.resolver.reaching(name, write.call)
        others = [b for b in bindings if b.kind != "param"]
        if not others or len(others) == len(bindings):
            continue
        tests = {id(i): i for b in others if (i := _fallback_if(ctx, b.statement, name))}
        if len(tests) == 1 and all(_fallback_if(ctx, b.statement, name) for b in others):
            yield name, next(iter(tests.values()))


def _fallback_if(ctx: FileContext, statement: cst.CSTNode, name: str) -> cst.If | None:
    """The `if name is None:` / `if not name:` whose body holds `statement`."""
    for ancestor in ctx.ancestors(statement):
        if type(ancestor) is cst.FunctionDef:
            return None
        if type(ancestor) is cst.If and ctx.is_inside(statement, ancestor.body):
            test = ancestor.test
            if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
                test = test.expression
                return ancestor if type(test) is cst.Name and test.value == name else None
            if (
                type(test) is cst.Comparison
                and len(test.comparisons) == 1
                and type(test.comparisons[0].operator) is cst.Is
                and type(test.left) is cst.Name
                and test.left.value == name
                and type(test.comparisons[0].comparator) is cst.Name
                and test.comparisons[0].comparator.value == "None"
            ):
                return ancestor
            return None
    return None


def helper_writes(
    ctx: FileContext, func: cst.FunctionDef, depth: int = 1, inner: bool = False
) -> tuple[HelperWrite, ...]:
    """The writes of `func` (not in a loop of its own, not at one configured step, not
    right before the process exits) whose path does not change within it: what a caller
    writes over each time it calls `func` with the same arguments. Also, `depth` calls
    deep, those of the functions of this module it calls so (`save_latest(dir)` running
    `self.save_checkpoint(join(dir, "latest.pth"))`)."""
    positions = parameter_positions(func)
    # Inside another function of the module: its path as any caller's arguments make it,
    # not as this module's own calls do.
    within = func if inner else None
    found = []
    by_scope = ctx.memo(_writes_by_scope)
    for write in by_scope.get(func, ()):
        call = write.call
        if not _once_per_call(ctx, call):
            continue
        target, fallback, skip = overwritten(ctx, write, within=within), None, None
        if target is None:
            # `if filename is None: filename = f"ckpt_{epoch}.pth"`: a caller passing the
            # file name overwrites it each call.
            for name, branch in _fallbacks(ctx, func, write):
                target = overwritten(ctx, write, branch, within)
                if target is not None:
                    fallback, skip = (name, positions[name]), branch
                    break
        if target is None:
            continue
        path, at = target
        saved = argument(write.copied or call, 0, "obj")
        path_params = _params_in(ctx, path, at, positions, skip, within)
        found.append(
            HelperWrite(
                verb=write.verb,
                shown=ctx.code(write.path).strip(),
                path_params=path_params,
                saved_param=_saved_param(ctx, saved, positions),
                texts=tuple(path_texts(ctx, path, at, skip, within)),
                requires=_requires(ctx, call, func, positions),
                fallback=fallback,
                defaults=_default_texts(ctx, func, path_params),
                unless=_unless(ctx, call, positions),
                backed_up=backed_up_write(ctx, write),
            )
        )
    writers = by_scope.keys() - {func}
    if depth > 0 and writers:
        for call in ctx.model.calls_by_frame(func):
            callees = [c for c in ctx.resolver.callees(call) if c in writers]
            if not callees or not _once_per_call(ctx, call):
                continue
            for called in (w for c in callees for w in helper_writes(ctx, c, depth - 1, True)):
                composed = _composed(ctx, call, func, called, positions)
                if composed is not None:
                    found.append(composed)
    return tuple(found)


def backed_up_write(ctx: FileContext, write: Write) -> bool:
    """The same state is saved in the same round onto a path that changes per save
    (`model.pt.ep{epoch}` beside `model.pt`), before or after this write, every round or
    every k-th, or the file this write makes is copied onto such a path: a crash mid-write
    of the fixed file leaves the last file of its own complete, and a restart can fall
    back on it. A round is an iteration of the innermost loop around the write, or a call
    of its function where no loop of it surrounds the write."""
    func = ctx.enclosing_function(write.call)
    saved = write.call.args[0].value if write.call.args else None
    if func is None or saved is None or write.copied is not None:
        return False
    loop = round_loop(ctx, write.call)
    for other in ctx.memo(_writes_by_scope).get(func, ()):
        call = other.call
        if call is write.call or not call.args:
            continue
        if loop is not None and not ctx.is_inside(call, loop):
            continue
        if needs_unpassed_argument(ctx, call) or never_runs(ctx.flow, ctx.resolver, call):
            continue  # `if save_all:` that every call passes False: no file of its own
        if other.copied is not None:
            same = other.copied is write.call
        else:
            same = _flat(ctx, call.args[0].value) == _flat(ctx, saved)
        # What the function itself makes the path (not what its callers pass): a copy
        # onto `join(dirname(filename), "model_best.pth")` keeps one name.
        if same and varies_per_save(ctx, other.path, call, within=func):
            return True
    return False


def backed_up_call(ctx: FileContext, site: Call, sites: list[Call]) -> bool:
    """Another call of the same save helper (`sites`, with what each binds to the
    parameters its path is built from) in the same round as `site`, passing the same
    arguments but for the path, onto a path that changes per save
    (`save(model, opt, f"ckpt-{epoch}.pt")` beside `save(model, opt, "ckpt-latest.pt")`):
    as `backed_up_write`, for a helper of this file."""
    loop = round_loop(ctx, site.site)
    function = ctx.enclosing_function(site.site)
    for other in sites:
        if other.site is site.site or ctx.enclosing_function(other.site) is not function:
            continue
        if loop is not None and not ctx.is_inside(other.site, loop):
            continue
        if _other_arguments(ctx, site) != _other_arguments(ctx, other):
            continue
        if any(
            where is other.site and varies_per_save(ctx, expr, where, passed=True)
            for expr, where in other.bound
        ):
            return True
    return False


def _other_arguments(ctx: FileContext, site: Call) -> list[tuple[str, str]]:
    """The arguments of `site` other than those it binds to the path's parameters, as
    (keyword, code) pairs."""
    path_args = {id(expr) for expr, where in site.bound if where is site.site}
    return [
        (arg.keyword.value if arg.keyword else "", _flat(ctx, arg.value))
        for arg in site.site.args
        if id(arg.value) not in path_args
    ]


def _flat(ctx: FileContext, node: cst.CSTNode) -> str:
    """The code of `node` on one line, runs of whitespace as one space: how two arguments
    are compared."""
    return " ".join(ctx.code(node).split())


def _once_per_call(ctx: FileContext, call: cst.Call) -> bool:
    """`call` runs once each time its function runs, as far as a repeat goes: not in a
    loop of its own, not at one configured step, not right before the process exits or
    an exception leaves the function (a debug dump before `raise`)."""
    return ctx.enclosing_loop(call) is None and not (
        at_one_step(ctx, call) or exits_after(ctx, call) or raises_after(ctx, call)
    )


def _default_texts(
    ctx: FileContext, func: cst.FunctionDef, params: tuple[tuple[str, int], ...]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The string pieces of the default of each of `params` (`filename="checkpoint.pth"`)."""
    every = (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
    defaults = {p.name.value: p.default for p in every if p.default is not None}
    return tuple(
        (name, tuple(path_texts(ctx, defaults[name], func)))
        for name, _ in params
        if name in defaults
    )


def _params_in(
    ctx: FileContext,
    path: cst.BaseExpression,
    at: cst.CSTNode,
    positions: dict[str, int],
    skip: cst.CSTNode | None = None,
    within: cst.FunctionDef | None = None,
) -> tuple[tuple[str, int], ...]:
    """The parameters (of `positions`) the path is built from."""
    built_from = {
        node.value
        for value in ctx.resolver.sources(path, at, 3, scoped(ctx, skip, within))
        for node in ctx.walk(value.expr)
        if type(node) is cst.Name and node.value in positions
    }
    return tuple(sorted((n, positions[n]) for n in built_from))


def _saved_param(
    ctx: FileContext, saved: cst.BaseExpression | None, positions: dict[str, int]
) -> tuple[str, int] | None:
    """The parameter the saved object comes from (`model` of `model.state_dict()`)."""
    holders = [
        node.value
        for node in (ctx.walk(saved) if saved is not None else [])
        if type(node) is cst.Name and node.value in positions and node.value not in ("self", "cls")
    ]
    return (holders[0], positions[holders[0]]) if holders else None


def _requires(
    ctx: FileContext, call: cst.Call, func: cst.FunctionDef, positions: dict[str, int]
) -> tuple[tuple[str, int, bool], ...]:
    """The parameters that must be true for `call` to run (`if is_best:`)."""
    return tuple(
        (term.value, positions[term.value], _false_default(func, term.value))
        for condition in ctx.flow.conditions(call)
        for term, value in condition.terms()
        if value and type(term) is cst.Name and term.value in positions
    )


def _composed(
    ctx: FileContext,
    call: cst.Call,
    func: cst.FunctionDef,
    inner: HelperWrite,
    positions: dict[str, int],
) -> HelperWrite | None:
    """The write `inner` of the function `call` runs, as a write of `func`: the arguments
    `call` passes decide its path, the parameters of `func` they are built from are its
    own; None when the call leaves the write out or passes a path that changes per call."""

    if inner.fallback is not None and argument_for(call, inner.fallback) is None:
        return None
    if passes_value(call, inner.unless):
        return None  # `save(filename=...)`: the other branch of `if filename is None:`
    for name, position, false_default in inner.requires:
        value = argument_for(call, (name, position))
        if is_false_literal(value) or (value is None and false_default):
            return None
    shown = inner.shown
    texts = inner.texts_passing(
        *(p[0] for p in inner.path_params if argument_for(call, p) is not None)
    )
    params: set[tuple[str, int]] = set()
    for param in inner.path_params:
        value = argument_for(call, param)
        if value is None:
            continue
        value_texts = path_texts(ctx, value, call)
        if is_temporary(value_texts) or varies_per_save(ctx, value, call):
            return None
        texts += value_texts
        params.update(_params_in(ctx, value, call, positions))
        if inner.shown == param[0]:  # the path is the parameter (not `options.out_dir`)
            shown = ctx.code(value).strip()
    saved = argument_for(call, inner.saved_param) if inner.saved_param is not None else None
    return HelperWrite(
        verb=inner.verb,
        shown=shown,
        path_params=tuple(sorted(params)),
        saved_param=_saved_param(ctx, saved, positions),
        texts=tuple(texts),
        requires=_requires(ctx, call, func, positions),
        unless=_unless(ctx, call, positions),
    )


def _unless(
    ctx: FileContext, call: cst.Call, positions: dict[str, int]
) -> tuple[tuple[str, int], ...]:
    """The parameters that must be None for `call` to run (`if filename is None:`, the
    `else` of `if filename is not None:`): a caller passing one takes another branch."""
    found = []
    for condition in ctx.flow.conditions(call):
        for term, value in condition.terms():
            name = _none_test(term, value)
            if name is not None and name in positions:
                found.append((name, positions[name]))
    return tuple(found)


def _none_test(term: cst.BaseExpression, holds: bool) -> str | None:
    """The name `term` finds None when it `holds` (`x is None` holding, `x is not None`
    failing)."""
    if type(term) is not cst.Comparison or len(term.comparisons) != 1:
        return None
    target = term.comparisons[0]
    if not (type(target.comparator) is cst.Name and target.comparator.value == "None"):
        return None
    if type(term.left) is not cst.Name:
        return None
    if type(target.operator) is cst.Is and holds:
        return term.left.value
    if type(target.operator) is cst.IsNot and not holds:
        return term.left.value
    return None


def passes_value(call: cst.Call, params: tuple[tuple[str, int], ...]) -> bool:
    """`call` passes one of `params` a value that is not the literal None."""
    for param in params:
        passed = argument_for(call, param)
        if passed is not None and not (type(passed) is cst.Name and passed.value == "None"):
            return True
    return False


def _false_default(func: cst.FunctionDef, name: str) -> bool:
    """The parameter `name` of `func` defaults to a false literal (`False`, `None`, `0`)."""
    params = (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
    default = next((p.default for p in params if p.name.value == name), None)
    return is_false_literal(default)


def is_false_literal(expr: cst.BaseExpression | None) -> bool:
    """`False`, `None` or `0`."""
    if type(expr) is cst.Name:
        return expr.value in ("False", "None")
    return type(expr) is cst.Integer and expr.value == "0"


def file_names(texts: list[str] | tuple[str, ...]) -> set[str]:
    """The pieces of a path's text that name its file (`checkpoint.pth.tar`; `last_ckpt`
    of `model_name + ".pt"` when no piece has an extension), not a bare extension (`.pt`)
    nor, beside a file name, a folder (`weights`)."""
    names = set()
    for text in texts:
        tail = text.rsplit("/", 1)[-1].strip()
        if len(tail) >= 3 and not _EXTENSION.match(tail):
            names.add(tail)
    with_extension = {n for n in names if _HAS_EXTENSION.search(n)}
    return with_extension or names


def _names_file(text: str, name: str) -> bool:
    """The last component of `text` is the file `name`, or `name` plus an extension."""
    tail = text.rsplit("/", 1)[-1].strip()
    return tail == name or (tail.startswith(name + ".") and "." not in name)


def _reader_calls(ctx: FileContext) -> list[tuple[cst.Call, str]]:
    """The calls of this file named for reading a checkpoint back (`torch.load`,
    `load_checkpoint`, `resume`), each with its name; listed once per file."""
    found = []
    for call in ctx.calls:
        name = ctx.call_name(call) or dotted(call.func) or ""
        if READER.search(name.rpartition(".")[2]):
            found.append((call, name))
    return found


def reads_back(
    ctx: FileContext,
    names: set[str],
    folders: tuple[str, ...] = (),
    write: cst.Call | None = None,
) -> cst.Call | None:
    """A call of this file that reads a checkpoint back (`torch.load`, a `load_checkpoint`
    or `resume` helper) from a path whose text holds one of the file names `names`, and
    each of the written path's literal folders `folders` (`folder_pieces`): the run
    resumes from the file written. A copy of `G_latest.pth` into a literal folder
    (`join("/content/drive/MyDrive/", "G_latest.pth")`) is not the file a resume reads
    from `join(model_dir, "G_latest.pth")`; nor does a read that runs only after `write`
    in its function read anything back for a resume (`_after_writing`)."""
    if not names:
        return None
    for call, paths in ctx.memo(_resume_reads):
        pieces = [t for texts in paths for t in texts]
        if any(_names_file(t, n) for t in pieces for n in names) and all(
            any(folder in t for t in pieces) for folder in folders
        ):
            if write is not None and _after_writing(ctx, call, write):
                continue
            return call
    return None


def _after_writing(ctx: FileContext, read: cst.Call, write: cst.Call) -> bool:
    """`read` runs after `write` in its function, or after a call of the function of this
    file that holds `write`: later in the source (the best weights read back once the
    epochs that wrote them are over, to report or test them; or, in a loop holding both,
    the file each pass writes and then hands to every rank). A resume reads before the
    writes."""
    func = ctx.enclosing_function(read)
    writer = ctx.enclosing_function(write)
    if func is None or writer is None:
        return False
    if writer is func:
        return ctx.before(write, read)
    return any(
        ctx.enclosing_function(call) is func
        and ctx.before(call, read)
        and writer in ctx.resolver.callees(call)
        for call in ctx.calls_within(func)
    )


def folder_pieces(texts: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The literal folders written out in a path's pieces `texts`: the part before the
    last `/` of a piece holding one (`"/content/drive/MyDrive/"`, `"ckpt/last.pt"`), when
    it is a word of three characters or more. A piece with no `/` (`"checkpoints"` in a
    `join`, `"latest_model"` formatted into a name) is not taken for a folder."""
    found = []
    for text in texts:
        head = text.strip().rpartition("/")[0].strip("/")
        if len(head) >= 3 and any(c.isalpha() for c in head):
            found.append(head)
    return tuple(found)


def _resume_reads(ctx: FileContext) -> list[tuple[cst.Call, list[list[str]]]]:
    """The reader calls that may go on training (`_continues_training`), each with the
    path texts of its arguments that name no weights of another run; not those in code
    that never runs (`if False:`); once per file."""
    found = []
    for call, _ in ctx.memo(_reader_calls):
        if never_runs(ctx.flow, ctx.resolver, call) or not _continues_training(ctx, call):
            continue
        paths = [
            path_texts(ctx, arg.value, call)
            for arg in call.args
            if not from_another_run(ctx, arg.value, call)
        ]
        found.append((call, paths))
    return found


def _continues_training(ctx: FileContext, load: cst.Call, depth: int = 2) -> bool:
    """`load` may read a checkpoint to go on training: it is named for resuming
    (`resume_from(path)`), a resume load (`resume_loads.resumes`), or made where training
    runs (a function that runs `backward()`, or calls one, or builds the optimizer of a
    loop another module runs; a method of a class that trains, unless every call of it in
    the file is one that continues no training; module level, before the script's last
    training loop ends), not in a test or demo
    function of a training file that never trains itself (`model = torch.load("last.pt")`
    in `test()`), nor in a function named for evaluation that does not train
    (`def test(self):` loading `best-val-model.pt`), nor where nothing after it in a
    function that trains trains again (`_trains_after`: the evaluate-only branch, the best
    weights read back after the last epoch), whatever it restores."""
    name = (ctx.call_name(load) or dotted(load.func) or "").rpartition(".")[2]
    loops = domain_of(ctx).loops
    func = ctx.enclosing_function(load)
    if (
        func is not None
        and named_for([func.name.value]) == "evaluation"
        and not _reaches_backward(ctx, func, with_gradients=True)
    ):
        return False  # `def test(self):` reading the best weights back to evaluate
    sets_up = func is not None and (
        loops.runs_backward(func) or any(loops.builds_optimizer(c) for c in ctx.calls_within(func))
    )
    if sets_up and func is not None and not _trains_after(ctx, load, func):
        return False  # the best weights read back for a final test, whatever it restores
    if RESUMER.search(name) or any(r.load is load for r in resumes(ctx)):
        return True
    if not loops.trains:
        return True  # where no training is in sight, any load may be the resume
    if func is None:  # module level: after the last training loop of the script, none
        return not _after_training(ctx, load) and not _apart_from_training(ctx, load)
    if sets_up:
        # a function that sets training up (its optimizer), whose steps may run elsewhere
        return not _apart_from_training(ctx, load)
    owner = ctx.model.enclosing_class(func)
    if owner is None or not any(
        loops.runs_backward(method)
        for method in ctx.nodes_within(owner, cst.FunctionDef)
        if type(method) is cst.FunctionDef
    ):
        return False
    # A method of a class that trains, unless every call of it in the file continues no
    # training (`self.load_model(best_path)` after the last epoch, for the final test).
    calls = ctx.resolver.calls_of(func)
    return depth == 0 or not calls or any(_continues_training(ctx, c, depth - 1) for c in calls)


def _trains_after(ctx: FileContext, load: cst.Call, func: cst.FunctionDef) -> bool:
    """Something that may run after `load` in `func` trains, or the training of `func` is
    out of sight: a later statement of each block around the load, up to the function,
    reaches `backward()`, or a loop around it does (its next pass). The other branch of an
    `if` around the load never runs after it (`if args.evaluate: load(best); test()` /
    `else:` train), and a `return` of nothing or a `raise` after it ends the function
    there (`if args.test_only: load(best); test(); return`): a load with no training after
    it (the best weights read back for a final test) resumes nothing. Where the function
    trains out of sight only, a load it reaches the end after may resume."""
    child: cst.CSTNode = load
    for ancestor in ctx.ancestors(load):
        if ancestor is func:
            # nothing after it trains; where the steps run out of sight, any load may resume
            return not _reaches_backward(ctx, func)
        if isinstance(ancestor, (cst.For, cst.While)) and _reaches_backward(ctx, ancestor.body):
            return True
        if type(ancestor) is cst.IndentedBlock and isinstance(child, cst.BaseStatement):
            body = list(ancestor.body)
            later = body[body.index(child) + 1 :] if child in body else []
            for statement in later:
                if _reaches_backward(ctx, statement):
                    return True
                if _ends_function(statement):
                    return False
        child = ancestor
    return True


def _ends_function(statement: cst.BaseStatement) -> bool:
    """`statement` is a `return` of nothing or a `raise` of its own (not one nested in a
    branch): a `return model, optimizer` hands what was loaded on to be trained."""
    return type(statement) is cst.SimpleStatementLine and any(
        type(small) is cst.Raise
        or (
            type(small) is cst.Return
            and (
                small.value is None
                or (type(small.value) is cst.Name and small.value.value == "None")
            )
        )
        for small in statement.body
    )


def _reaches_backward(ctx: FileContext, node: cst.CSTNode, with_gradients: bool = False) -> bool:
    """A call in `node` runs `backward()`: itself, a function of this file that does, or
    a project helper that does. `with_gradients`: not counting calls under `with
    torch.no_grad():` (a shared epoch function run there for a test trains nothing)."""
    loops, backward, project = domain_of(ctx).loops, domain_of(ctx).backward, project_of(ctx)
    for call in ctx.nodes_within(node, cst.Call):
        if type(call) is not cst.Call or (with_gradients and loops.is_evaluation(call)):
            continue
        if backward.site_of(call) is not None:
            return True
        if any(
            type(f) is cst.FunctionDef and loops.runs_backward(f)
            for f in ctx.resolver.callees(call)
        ):
            return True
        if project is not None and project.helper_runs_backward(ctx, call):
            return True
    return False


def _after_training(ctx: FileContext, load: cst.Call) -> bool:
    """`load`, at module level, runs after every training loop of the module's own code
    has ended (the best weights read back for an export or a final test): no step follows
    it, so it resumes nothing (in a function, `_trains_after` decides)."""
    training = [
        loop
        for loop in ctx.nodes_within(ctx.module, cst.For, cst.While)
        if isinstance(loop, (cst.For, cst.While))
        and ctx.enclosing_function(loop) is None
        and _reaches_backward(ctx, loop.body)
    ]
    return bool(training) and all(
        ctx.before(loop, load) and not ctx.is_inside(load, loop) for loop in training
    )


def _apart_from_training(ctx: FileContext, load: cst.Call) -> bool:
    """Every `backward()` of the load's frame runs on a path that excludes the load (`if
    args.mode == "test":` loads, `if args.mode == "train":` trains): a run that loads
    evaluates only, it resumes nothing."""
    frame = ctx.model.frame(load)
    sites = [s.call for s in domain_of(ctx).backward.sites if ctx.model.frame(s.call) is frame]
    return bool(sites) and all(exclusive(ctx.flow, ctx.resolver, load, site) for site in sites)


def writer_names_unresumed(func: cst.FunctionDef | None) -> bool:
    """The function holding a write is named for best, final or exported weights
    (`_save_best_model`, `export_weights`): the file it writes is no resume file, whatever
    name a configuration gives it."""
    return func is not None and _NOT_RESUMED_WRITER.search(func.name.value) is not None


def names_unresumed_file(texts: list[str] | tuple[str, ...]) -> bool:
    """A path's pieces name a file nobody resumes a run from, or its folder (`best.pth`,
    `best_model/state.pt`, `final.pt`, an export)."""
    return bool(_unresumed_pieces(texts))


def _unresumed_pieces(texts: list[str] | tuple[str, ...]) -> list[str]:
    """The pieces of `texts` that name a file nobody resumes from (its file name) or the
    best or final folder it lies in."""
    names = file_names(texts)
    return [
        t
        for t in texts
        if (_NOT_RESUMED_FROM if t in names else _NOT_RESUMED_FOLDER).search(t) is not None
    ]


def names_it(ctx: FileContext, call: cst.Call, texts: list[str] | tuple[str, ...]) -> bool:
    """The reading `call` names the file itself, folder and all: its arguments' pieces
    hold each of `texts` that names an unresumed file (`load(join(out, "best_model",
    "state.pt"))` for `best_model/state.pt`)."""
    wanted = _unresumed_pieces(texts)
    read = [t for a in call.args for t in path_texts(ctx, a.value, call)]
    return all(any(w in r for r in read) for w in wanted)


def resumes_from_given_path(
    ctx: FileContext, texts: list[str], saved: frozenset[str] | None = None
) -> cst.Call | None:
    """A call of this file that resumes from a path the user gives, when the written file
    is one a user resumes from (its path's pieces `texts` name a `checkpoint` /
    `last`-style file, and neither it nor its folder is a `best` / `final` / export one):
    a resume load (`resume_loads.resumes`) of a path naming no file of its own (`ckpt =
    torch.load(args.use_checkpoint)` restoring the optimizer too), or a reader of the path
    of a resume option (`load_checkpoint(cfg.resume_from, model)`), not of another run's
    weights (`args.resume_teacher`). The documented restart
    passes the file written, unless the file lacks a key the resume reads (`saved`, the
    keys of what is written when they are in sight: weights alone are not the file a
    resume reading `ckpt["optimizer"]` restarts from)."""
    if not any(_RESUMED_FROM.search(n) for n in file_names(texts)) or names_unresumed_file(texts):
        return None
    for resume in resumes(ctx):
        given = resume.load.args[0].value if resume.load.args else None
        if saved is not None and keys_read(ctx, resume.load) - saved:
            continue
        if given is None or from_another_run(ctx, given, resume.load):
            continue
        if not file_names(path_texts(ctx, given, resume.load)):
            return resume.load
    for call, name in ctx.memo(_reader_calls):
        if not call.args or name.rpartition(".")[2] in _STATE_READERS:
            continue  # `model.load_state_dict(resume_state)`: handed a state, not a path
        given = call.args[0].value
        if from_another_run(ctx, given, call):
            continue  # `torch.load(args.resume_teacher)`: another run's weights
        exprs = [given, *(v.expr for v in ctx.resolver.values(given, call))]
        if saved is not None and keys_read(ctx, call) - saved:
            continue
        if any(_RESUME_OPTION.search(last_name(e) or "") for e in exprs):
            return call
    return None


# Readers handed what a load returned, not a path: their argument names no file.
_STATE_READERS = frozenset({"load_state_dict"})


def read_back_by_helper(ctx: FileContext, names: set[str]) -> cst.Call | None:
    """A call of this file to a project helper of another module named for reading back
    (`resume_if_possible(args.checkpoint_dir, model)`) whose `torch.load` reads a file it
    names itself, one of `names` (`join(checkpoint_dir, "checkpoint.pth")`): the run
    resumes from the file written."""
    project = project_of(ctx)
    if project is None or not names:
        return None
    for call, name in ctx.memo(_reader_calls):
        if name == "torch.load":
            continue
        for load in project.helper_loads(ctx, call):
            if any(_names_file(t, n) for t in load.texts for n in names):
                return call
    return None


_VERBS = re.compile(r"(?i)save|write|dump|store|load|read|restore|recover")


def read_back_by_twin(
    ctx: FileContext, writer: cst.Call, paths: list[cst.BaseExpression]
) -> cst.Call | None:
    """A call of this file to the reading twin of the saving helper `writer` calls
    (`load_resume_state` for `save_resume_state`, `load_checkpoint` for
    `save_checkpoint`) that passes the same path arguments (`paths`, the arguments the
    write's path is built from; none: no evidence)."""
    if not paths:
        return None  # the helpers' own default files: which one each reads is unknown
    written = ctx.call_name(writer) or dotted(writer.func) or ""
    stem = _VERBS.sub("", written.rpartition(".")[2])
    if stem == written.rpartition(".")[2] or len(stem.strip("_")) < 3:
        return None
    wanted = {ctx.code(p).strip() for p in paths}
    for call in ctx.calls:
        name = (ctx.call_name(call) or dotted(call.func) or "").rpartition(".")[2]
        if call is writer or _VERBS.sub("", name) != stem or not READER.search(name):
            continue
        passed = {ctx.code(a.value).strip() for a in call.args}
        if wanted <= passed:
            return call
    return None


_LISTINGS = frozenset({"glob.glob", "glob.iglob", "os.listdir", "os.scandir"})
_LISTING_METHODS = frozenset({"glob", "rglob", "iterdir"})
_FORMAT_FIELD = re.compile(r"%[-0-9.]*[dsif]|\{[^}]*\}|[0-9]+")
_FIELD = re.compile(r"\{[^}]*\}")  # a `str.format` field
_GLOB = re.compile(r"[*?\[]")


def _listing(ctx: FileContext, call: cst.Call) -> bool:
    name = ctx.call_name(call) or ""
    func = call.func
    return name in _LISTINGS or (
        type(func) is cst.Attribute and func.attr.value in _LISTING_METHODS and not name
    )


def resumed_from_newest(
    ctx: FileContext, texts: list[str], names: set[str] | None = None
) -> cst.Call | None:
    """The file lists the checkpoint folder for files named like the written path's pieces
    (`texts`: `checkpoint_` and `.pth` of `f"checkpoint_{epoch}.pth"`, against the pattern
    `checkpoint_*.pth`) and loads one of them (`torch.load(sorted(files)[-1])`, a
    `load_checkpoint`/`resume` call): a restart resumes from the newest file by itself.
    `names`: the written file's name patterns (`file_name_patterns`) where known; a listing
    by a glob pattern then lists it only when its pattern matches them (`ckpt_*.pth` lists
    no `model_{step}.pth`, whatever folder both share). The listing call, or None."""
    pieces = {
        piece
        for text in texts
        for piece in _FORMAT_FIELD.split(text.rsplit("/", 1)[-1])
        if len(piece.strip("._-")) >= 4
    }
    if not pieces:
        return None
    listings = []
    for call in ctx.calls:
        if not _listing(ctx, call):
            continue
        listed = [t for a in call.args for t in path_texts(ctx, a.value, call)]
        if _names_one_file(ctx, call, listed):
            continue  # `glob(f".../ckpt_{args.resume_epoch}.pt")[0]`: the file asked for
        if _lists(listed, pieces, names):
            listings.append(call)
    if not listings:
        return None
    wanted = {id(call) for call in listings}
    for call in ctx.calls:
        name = ctx.call_name(call) or dotted(call.func) or ""
        if not READER.search(name.rpartition(".")[2]) or not call.args:
            continue
        for value in ctx.resolver.sources(call.args[0].value, call, 4):
            found = next((n for n in ctx.walk(value.expr) if id(n) in wanted), None)
            if type(found) is cst.Call:
                return found
    return None


def _names_one_file(ctx: FileContext, call: cst.Call, listed: list[str]) -> bool:
    """A glob whose pattern has no wildcard in a file name (`ckpt_{best_epoch}.pt` below
    a `run_*` folder): it finds the one file a value names, not the newest of a series.
    Each piece's text after its last `/` is taken for a file name (a folder's piece
    without a `/` too: that errs towards a series)."""
    name = ctx.call_name(call) or dotted(call.func) or ""
    if not name.rpartition(".")[2].endswith("glob") or not any("/" in t for t in listed):
        return False
    return not any(_GLOB.search(t.rsplit("/", 1)[-1]) for t in listed)


def _lists(listed: list[str], pieces: set[str], names: set[str] | None) -> bool:
    """A listing whose argument texts are `listed` may list the written file: its glob
    pattern matches one of the file's `names`, or, with no pattern or no known name, one
    of its texts holds a piece of the written name."""
    patterns = [t.rsplit("/", 1)[-1] for t in listed if _GLOB.search(t.rsplit("/", 1)[-1])]
    if patterns and names:
        return any(fnmatch.fnmatchcase(n.replace("*", "0"), p) for n in names for p in patterns)
    return any(p in t for t in listed for p in pieces)


def file_name_patterns(
    ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode
) -> set[str] | None:
    """The names of the files a path can write, a format field standing for any text
    (`ckpt_*.pth` for `os.path.join(folder, f"ckpt_{step}.pth")`); None when some value
    of the path has a name ddplint cannot spell."""
    names: set[str] = set()
    for value in ctx.resolver.values(path, at):
        expr = value.expr
        if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
            continue  # a name: its values follow
        if type(expr) is cst.Call and expr.args and last_name(expr.func) in _JOINS:
            found = file_name_patterns(ctx, expr.args[-1].value, value.at)
        elif type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Divide:
            found = file_name_patterns(ctx, expr.right, value.at)
        else:
            name = _file_name_pattern(expr)
            found = None if name is None else {name}
        if found is None:
            return None
        names |= found
    return names or None


_JOINS = frozenset({"join", "joinpath"})


def _file_name_pattern(expr: cst.BaseExpression) -> str | None:
    """The last path component a string expression spells, format fields as `*`."""
    if type(expr) is cst.Call and type(expr.func) is cst.Attribute:
        template = string_value(expr.func.value) if expr.func.attr.value == "format" else None
        text = None if template is None else _FIELD.sub("*", template)
    elif type(expr) is cst.FormattedString:
        parts = expr.parts
        text = "".join(p.value if type(p) is cst.FormattedStringText else "*" for p in parts)
    else:
        text = string_value(expr)
    tail = None if text is None else text.rsplit("/", 1)[-1]
    return tail if tail and tail.strip("*") else None

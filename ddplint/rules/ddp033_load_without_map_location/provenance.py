"""Where a loaded file comes from: a `torch.save` of this file that writes CUDA state to
the same path, and whether what a load returns is handed to `load_state_dict`."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.project_view import ProjectView
from ddplint.engine.resolve import argument

SAVE = "torch.save"


@dataclass(frozen=True)
class Saved:
    """A save of the loaded file: the call, what it saves, and whether that is GPU state
    (`state_on_gpu`: see `_state_on_gpu`)."""

    call: cst.Call
    obj: cst.BaseExpression
    state_on_gpu: bool | None


# A file name with an extension, the last component of a path literal.
_FILE_NAME = re.compile(r"[^/\\]+\.[A-Za-z0-9]+$")
# What moves the saved tensors off the GPU (or keeps them off it).
_OFF_GPU = re.compile(r"\.cpu\(|[\"']cpu[\"']|cpu_offload|\.numpy\(|\.tolist\(")
# FSDP / DCP full state dicts gathered onto the CPU (`FullStateDictConfig(offload_to_cpu=
# True)`, `StateDictOptions(cpu_offload=True)`): `.state_dict()` there holds CPU tensors.
_GATHERED_TO_CPU = re.compile(r"offload_to_cpu\s*=\s*True|cpu_offload\s*=\s*True")
_STATE = re.compile(r"([\w.]*)\.state_dict\(\s*\)")
# State that holds no tensors of the model: a learning-rate scheduler's, a GradScaler's, a
# sampler's or a loader's `state_dict()` (numbers and lists), whatever device the job uses.
_TENSORLESS_STATE = re.compile(r"sched|scaler|sampler|loader", re.IGNORECASE)
_DEPTH = 3
_BUILTINS = frozenset({"str", "format", "join", "Path", "PurePath", "fspath", "open"})
_LIBRARIES = ("os.", "pathlib.", "posixpath.", "glob.", "shutil.", "tempfile.", "io.", "fsspec.")
_MOVES = ("os.replace", "os.rename", "shutil.move", "shutil.copy", "shutil.copyfile")


def path_keys(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> set[str]:
    """What identifies the file `path` names: the code of every value the resolver finds
    for it (bare names aside: `path` in two functions is two files), and the file name of
    each (`latest.pth`; `ckpt_*.pt` for `f"ckpt_{epoch}.pt"`)."""
    keys = set()
    for value in ctx.resolver.values(path, at, _DEPTH):
        expr = value.expr
        if isinstance(expr, cst.Subscript):  # `files[-1]`: one of `files`
            keys |= path_keys(ctx, expr.value, value.at)
        elif not isinstance(expr, cst.Name):
            keys.add("code:" + ctx.code(expr))
        helper = _path_helper(ctx, expr)
        if helper is not None:
            keys.add("helper:" + helper)
        for node in ctx.walk(expr):
            name = _file_name(ctx, node)
            if name is not None:
                keys.add("file:" + name)
    return keys


def _path_helper(ctx: FileContext, expr: cst.BaseExpression) -> str | None:
    """The project function that builds the path (`get_weights_file_path(cfg, epoch)`):
    paths it returns are one family of files. Library and built-in calls (`os.path.join`,
    `str`, `Path`) build any path, so they name none."""
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, (cst.Name, cst.Attribute)):
        return None
    func = expr.func
    if isinstance(func, cst.Attribute) and not (
        isinstance(func.value, cst.Name) and func.value.value in ("self", "cls")
    ):
        return None  # a method of some value (`"{}.pt".format`, `path.joinpath`)
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value
    qualified = ctx.qualname(func)
    if name in _BUILTINS or (qualified is not None and qualified.startswith(_LIBRARIES)):
        return None
    return name


def _file_name(ctx: FileContext, node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.SimpleString):
        text = node.raw_value
    elif isinstance(node, cst.FormattedString):
        text = "".join(
            p.value if isinstance(p, cst.FormattedStringText) else "*" for p in node.parts
        )
    else:
        return None
    match = _FILE_NAME.search(text)
    return match.group(0) if match else None


def saves_of(ctx: FileContext, load: cst.Call, path: cst.BaseExpression) -> list[Saved]:
    """The `torch.save` calls of this file that write the file `load` reads (the same path
    expression or file name, or a file then moved onto it)."""
    wanted = path_keys(ctx, path, load)
    if not wanted:
        return []
    found = []
    for save in ctx.calls_to(SAVE):
        saved = argument(save, 0, "obj")
        target = argument(save, 1, "f")
        if saved is not None and target is not None and written_keys(ctx, target, save) & wanted:
            found.append(Saved(save, saved, _state_on_gpu(ctx, saved, save)))
    return found


def written_keys(ctx: FileContext, target: cst.BaseExpression, save: cst.Call) -> set[str]:
    """The keys of the file a save writes, and of the file it is then moved or copied to
    (`torch.save(state, tmp); os.replace(tmp, path)`)."""
    keys = path_keys(ctx, target, save)
    for move in ctx.calls_to(*_MOVES):
        source = argument(move, 0, "src")
        destination = argument(move, 1, "dst")
        if source is not None and destination is not None and path_keys(ctx, source, move) & keys:
            keys |= path_keys(ctx, destination, move)
    return keys


def _state_on_gpu(ctx: FileContext, saved: cst.BaseExpression, at: cst.CSTNode) -> bool | None:
    """True: a module's or optimizer's `state_dict()`, kept where it is (on the GPU of a
    CUDA job; a scheduler's or scaler's holds no tensors and is no evidence); False: moved
    to the CPU first (`.cpu()`); None: something else."""
    texts = [ctx.code(v.expr) for v in ctx.resolver.values(saved, at, _DEPTH)]
    if any(_OFF_GPU.search(text) for text in texts):
        return False
    if _GATHERED_TO_CPU.search(ctx.source):
        return None  # a sharded model's full state, gathered onto the CPU by a config
    owners = [m.group(1) for text in texts for m in _STATE.finditer(text)]
    return True if any(not _TENSORLESS_STATE.search(owner) for owner in owners) else None


def helper_saves_off_gpu(
    ctx: FileContext, load: cst.Call, path: cst.BaseExpression, project: ProjectView
) -> bool:
    """A saving helper of another module, called in this file on the file `load` reads
    (`save_model(model.to("cpu"), path)`), is handed state moved to the CPU first."""
    wanted = path_keys(ctx, path, load)
    if not wanted:
        return False
    for call in ctx.calls:
        if not call.args or any(a.star for a in call.args):
            continue
        for write in project.helper_writes(ctx, call):
            if write.saved_param is None:
                continue
            targets = [
                argument(call, position if position >= 0 else None, name)
                for name, position in write.path_params
            ]
            if not any(t is not None and path_keys(ctx, t, call) & wanted for t in targets):
                continue
            name, position = write.saved_param
            saved = argument(call, position if position >= 0 else None, name)
            if saved is not None and _OFF_GPU.search(ctx.code(saved)):
                return True
    return False


def same_format_saves(ctx: FileContext, load: cst.Call) -> list[Saved]:
    """The `torch.save` calls of this file that write a checkpoint in the format `load`'s
    result is read in: a dict literal holding every key read from it (`ckpt["model"]`,
    `ckpt["optimizer"]`, at least two), so the loaded file is one of this script's own
    checkpoints (a resume from a path given on the command line)."""
    read = _keys_read(ctx, load)
    if len(read) < 2:
        return []
    found = []
    for save in ctx.calls_to(SAVE):
        saved = argument(save, 0, "obj")
        if saved is None:
            continue
        written: set[str] = set()
        for value in ctx.resolver.values(saved, save, _DEPTH):
            if isinstance(value.expr, cst.Dict):
                written |= {
                    k
                    for e in value.expr.elements
                    if isinstance(e, cst.DictElement) and (k := _literal_key(e.key)) is not None
                }
        if read <= written:
            found.append(Saved(save, saved, _state_on_gpu(ctx, saved, save)))
    return found


def _keys_read(ctx: FileContext, load: cst.Call) -> set[str]:
    """The string keys read by subscript from the name `load`'s result is bound to, in its
    function after it (`ckpt["model"]`)."""
    statement = ctx.statement(load)
    if not (isinstance(statement, cst.Assign) and statement.value is load):
        return set()
    names = {t.target.value for t in statement.targets if isinstance(t.target, cst.Name)}
    scope = ctx.scope(load)
    keys = set()
    for node in ctx.nodes_of(cst.Subscript):
        if (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Name)
            and node.value.value in names
            and len(node.slice) == 1
            and isinstance(node.slice[0].slice, cst.Index)
            and ctx.scope(node) is scope
            and ctx.before(load, node)
        ):
            key = _literal_key(node.slice[0].slice.value)
            if key is not None:
                keys.add(key)
    return keys


def _literal_key(expr: cst.BaseExpression | None) -> str | None:
    return expr.raw_value if isinstance(expr, cst.SimpleString) else None

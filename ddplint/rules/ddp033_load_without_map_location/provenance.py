"""Where a loaded file comes from: a `torch.save` of this file that writes CUDA state to
the same path, and whether what a load returns is handed to `load_state_dict`."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.checkpoint_formats import (
    GATHERED_TO_CPU,
    OFF_GPU,
    dict_keys,
    keys_read,
    shown,
    state_on_gpu,
)
from ddplint.domain.checkpoints import SAVE
from ddplint.domain.project_view import ProjectView
from ddplint.domain.written_files import HelperWrite
from ddplint.engine.resolve import argument, argument_for
from ddplint.project_files import project_files, project_root


def gathered_to_cpu_in_imports(ctx: FileContext, project: ProjectView) -> bool:
    """A project module the file imports, directly or not (the helper that wraps the
    model), configures a sharded model to gather its state onto the CPU
    (`checkpoint_formats.GATHERED_TO_CPU`): what the file saves of it may hold CPU tensors
    only. The file's own text is `state_on_gpu`'s to read."""
    if not os.path.isfile(ctx.path):
        return False
    files = project_files(project_root(ctx.path))
    return project.text_closure_any(
        ctx.path,
        lambda path: (
            path != os.path.abspath(ctx.path)
            and bool(GATHERED_TO_CPU.search(files.text(path) or ""))
        ),
    )


@dataclass(frozen=True)
class Saved:
    """A save of the loaded file: how a message shows it (`torch.save(state, ...)`), whether
    it writes GPU state (`checkpoint_formats.state_on_gpu`), and what the file is to the
    loading script (`the file this script writes`)."""

    shown: str
    state_on_gpu: bool | None
    written: str


# A file name with an extension, the last component of a path literal.
_FILE_NAME = re.compile(r"[^/\\]+\.[A-Za-z0-9]+$")
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
        if type(expr) is cst.Subscript:  # `files[-1]`: one of `files`
            keys |= path_keys(ctx, expr.value, value.at)
        elif type(expr) is not cst.Name:
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
    if type(expr) is not cst.Call or not isinstance(expr.func, (cst.Name, cst.Attribute)):
        return None
    func = expr.func
    if type(func) is cst.Attribute and not (
        type(func.value) is cst.Name and func.value.value in ("self", "cls")
    ):
        return None  # a method of some value (`"{}.pt".format`, `path.joinpath`)
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value
    qualified = ctx.qualname(func)
    if name in _BUILTINS or (qualified is not None and qualified.startswith(_LIBRARIES)):
        return None
    return name


def _file_name(ctx: FileContext, node: cst.CSTNode) -> str | None:
    if type(node) is cst.SimpleString:
        text = node.raw_value
    elif type(node) is cst.FormattedString:
        text = "".join(p.value if type(p) is cst.FormattedStringText else "*" for p in node.parts)
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
            found.append(_saved(ctx, save, saved, "the file this script writes"))
    return found


def _saved(ctx: FileContext, save: cst.Call, saved: cst.BaseExpression, written: str) -> Saved:
    return Saved(f"`torch.save({shown(ctx, saved)}, ...)`", state_on_gpu(ctx, saved, save), written)


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


def helper_saves_off_gpu(
    ctx: FileContext, load: cst.Call, path: cst.BaseExpression, project: ProjectView
) -> bool:
    """A saving helper of another module, called in this file on the file `load` reads
    (`save_model(model.to("cpu"), path)`), is handed state moved to the CPU first."""
    wanted = path_keys(ctx, path, load)
    if not wanted:
        return False
    for call, write, saved in _handed_to_savers(ctx, project):
        targets = [argument_for(call, param) for param in write.path_params]
        if any(
            t is not None and path_keys(ctx, t, call) & wanted for t in targets
        ) and OFF_GPU.search(ctx.code(saved)):
            return True
    return False


def _handed_to_savers(
    ctx: FileContext, project: ProjectView
) -> Iterator[tuple[cst.Call, HelperWrite, cst.BaseExpression]]:
    """Each call of a saving helper of another module (`helper_writes`) with a write of
    what it is handed, the write, and the expression the call hands it."""
    for call in ctx.calls:
        if not call.args or any(a.star for a in call.args):
            continue
        for write in project.helper_writes(ctx, call):
            saved = argument_for(call, write.saved_param) if write.saved_param else None
            if saved is not None:
                yield call, write, saved


def written_elsewhere(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The file `path` names by a literal last component (`f"{out}/ckpt/pretrained_g"`)
    appears in the text of another project file that saves: another script may write it,
    in whatever format and on whatever device it chooses."""
    names = {
        name
        for value in ctx.resolver.values(path, at, _DEPTH)
        if (name := _literal_last_component(value.expr)) is not None
    }
    if not names:
        return False
    tree = project_files(project_root(ctx.path))
    here = os.path.abspath(ctx.path)
    return any(
        "save" in text and any(name in text for name in names)
        for other in tree.paths
        if other != here and (text := tree.text(other)) is not None
    )


def _literal_last_component(expr: cst.BaseExpression) -> str | None:
    """The last path component of a string literal or f-string, when no placeholder is in
    it (`"ckpt/g_best"`, `f"{root}/ckpt/g_best"`), else None."""
    if type(expr) is cst.SimpleString:
        text = expr.raw_value
    elif type(expr) is cst.FormattedString:
        last = expr.parts[-1] if expr.parts else None
        if type(last) is not cst.FormattedStringText or "/" not in last.value:
            return None
        text = last.value
    else:
        return None
    name = re.split(r"[/\\]", text)[-1]
    return name if len(name) > 3 else None


def same_format_saves(ctx: FileContext, load: cst.Call, project: ProjectView | None) -> list[Saved]:
    """The saves of checkpoints in the format `load`'s result is read in: a dict holding
    every key read from it (`ckpt["model"]`, `ckpt["optimizer"]`, two at least), so the
    loaded file is one of the project's own checkpoints (a resume from a path given on the
    command line). The dict is written by a `torch.save` of this file, handed here to a
    saving helper of another module (`save_checkpoint({...}, path)`), or written by a
    module this file imports, transitively (`checkpoint_formats`)."""
    read = keys_read(ctx, load)
    if len(read) < 2:
        return []
    written = "a checkpoint of the format this script writes"
    found = []
    for save in ctx.calls_to(SAVE):
        saved = argument(save, 0, "obj")
        if saved is not None and read <= dict_keys(ctx, saved, save):
            found.append(_saved(ctx, save, saved, written))
    if project is None:
        return found
    for call, _, saved in _handed_to_savers(ctx, project):
        if read <= dict_keys(ctx, saved, call):
            callee = ctx.code(call.func).strip()
            found.append(
                Saved(
                    f"`{callee}({shown(ctx, saved)}, ...)`", state_on_gpu(ctx, saved, call), written
                )
            )
    for where, saved_format in project.saved_formats(ctx.path):
        if read <= set(saved_format.keys):
            found.append(
                Saved(
                    f"`torch.save({saved_format.shown}, ...)`",
                    saved_format.state_on_gpu,
                    f"a checkpoint of the format `{where}` writes",
                )
            )
    return found

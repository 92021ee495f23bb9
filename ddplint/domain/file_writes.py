"""Files a statement writes or deletes, and whether their name is the same in every
process: the calls that truncate and rewrite a file (`open(path, "w")`, a log handler opened
with `mode="w"`, `np.save`, `Path.write_text`), the calls that delete one (`os.remove`,
`shutil.rmtree`), and, three-valued, whether the path names one shared file."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import string_value
from ddplint.domain.opened_files import is_opener, opened_for_writing, truncates
from ddplint.domain.overwrites import path_texts
from ddplint.domain.paths import own_file
from ddplint.engine import argument
from ddplint.names import dotted

_ARRAY_SAVES = frozenset({"numpy.save", "numpy.savez", "numpy.savez_compressed", "numpy.savetxt"})
_REMOVALS = frozenset({"os.remove", "os.unlink", "shutil.rmtree"})
_PATH_CLASSES = frozenset({"pathlib.Path", "pathlib.PosixPath", "Path"})
# Pieces of a path that differ between processes, or may: a process id, a random or
# temporary name, a host name, the wall clock.
_PER_PROCESS = re.compile(
    r"getpid|uuid|mkstemp|mkdtemp|gettempdir|gethostname|node\(|random|time|datetime|now\("
)
_FILE_NAME = re.compile(r"[\w-]\.[A-Za-z][\w]{0,9}$")
_FOLDER_NAME = re.compile(r"(^|/)[A-Za-z_][\w.-]*$")


@dataclass(frozen=True)
class FileWrite:
    """One call that writes (or deletes) a file: the call, the path expression, what it
    does in a message's words (`how`, with `{file}` standing for the path: `opens {file}
    with mode `w``), and whether it deletes."""

    call: cst.Call
    path: cst.BaseExpression
    how: str
    deletes: bool = False
    folder: bool = False
    logs: bool = False


def file_writes(ctx: FileContext) -> Iterator[FileWrite]:
    """The calls of this file that truncate and rewrite a file or delete one."""
    for call in ctx.calls:
        found = _write(ctx, call)
        if found is not None:
            yield found


def _write(ctx: FileContext, call: cst.Call) -> FileWrite | None:
    if is_opener(ctx, call):
        opened = opened_for_writing(ctx, call)
        if opened is None:
            return None
        return FileWrite(call, opened[0], f"opens {{file}} with mode `{opened[1]}`")
    name = ctx.call_name(call) or dotted(call.func) or ""
    if name == "logging.FileHandler":
        mode = argument(call, 1, "mode")
        return _logs(call, argument(call, 0, "filename"), mode)
    if name == "logging.basicConfig":
        path = argument(call, None, "filename")
        return _logs(call, path, argument(call, None, "filemode"))
    if name in _ARRAY_SAVES:
        path = argument(call, 0, "file")
        return None if path is None else FileWrite(call, path, f"writes {{file}} with `{name}`")
    if name in _REMOVALS:
        path = argument(call, 0, "path")
        if path is None or _tolerates_missing(call):
            return None
        folder = name == "shutil.rmtree"
        return FileWrite(call, path, f"deletes {{file}} with `{name}`", True, folder)
    return _path_method(ctx, call)


def _logs(
    call: cst.Call, path: cst.BaseExpression | None, mode: cst.BaseExpression | None
) -> FileWrite | None:
    """A log file opened for writing from its start (`filemode="w"`; `truncates`)."""
    text = string_value(mode) if mode is not None else None
    if path is None or not truncates(text):
        return None
    return FileWrite(call, path, f"logs to {{file}} with mode `{text}`", logs=True)


def _tolerates_missing(call: cst.Call) -> bool:
    """`shutil.rmtree(path, ignore_errors=True)`: a second delete is harmless."""
    flag = argument(call, 1, "ignore_errors")
    return type(flag) is cst.Name and flag.value == "True"


def _path_method(ctx: FileContext, call: cst.Call) -> FileWrite | None:
    """`Path(...).write_text(...)`, `.write_bytes(...)`, `.unlink()` on a value the
    resolver shows to be a `pathlib.Path`."""
    func = call.func
    if type(func) is not cst.Attribute:
        return None
    method = func.attr.value
    if method not in ("write_text", "write_bytes", "unlink"):
        return None
    if not _is_path(ctx, func.value, call):
        return None
    if method == "unlink":
        missing = argument(call, 0, "missing_ok")
        if type(missing) is cst.Name and missing.value == "True":
            return None
        return FileWrite(call, func.value, "deletes {file} with `Path.unlink`", deletes=True)
    return FileWrite(call, func.value, f"rewrites {{file}} with `Path.{method}`")


def _is_path(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 3) -> bool:
    """`expr` holds a `pathlib.Path`: a `Path(...)` call, a `/` whose left side is one, or
    a name bound to one of them."""
    if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Divide:
        return depth > 0 and _is_path(ctx, expr.left, at, depth - 1)
    if type(expr) is cst.Call:
        return (ctx.call_name(expr) or dotted(expr.func) or "") in _PATH_CLASSES
    if depth == 0 or not isinstance(expr, (cst.Name, cst.Attribute)):
        return False
    values = [v for v in ctx.resolver.values(expr, at, 1) if v.expr is not expr]
    return bool(values) and all(_is_path(ctx, v.expr, v.at, depth - 1) for v in values)


def shared_file(
    ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode, folder: bool = False
) -> bool | None:
    """Whether `path` names one file every process shares: True when its pieces spell a
    file name (`eval_logs.json`, `dev.tsv`; for a `folder`, a folder name: `samples`)
    and nothing in it differs between processes;
    False for a name built from the rank, a fresh temporary file or `os.devnull`; None
    (unknown) for a name the file does not spell, or one built from a process id, the
    clock or a random draw."""
    if own_file(ctx, path, at) or "devnull" in ctx.code(path):
        return False
    if any(_PER_PROCESS.search(ctx.code(v.expr)) for v in ctx.resolver.sources(path, at, 2)):
        return None
    spelled = _FOLDER_NAME if folder else _FILE_NAME
    texts = path_texts(ctx, path, at)
    return True if any(spelled.search(t.rstrip("/")) for t in texts) else None


def shown_path(
    ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode, folder: bool = False
) -> str:
    """The path as a message names it: the file (or `folder`) name its pieces spell
    (`eval_logs.json`), else its code when short."""
    spelled = _FOLDER_NAME if folder else _FILE_NAME
    for text in path_texts(ctx, path, at):
        if spelled.search(text.rstrip("/")):
            return f"`{text.rstrip('/').rsplit('/', 1)[-1]}`"
    code = ctx.code(path)
    return f"`{code}`" if len(code) <= 40 and "\n" not in code else "one path"

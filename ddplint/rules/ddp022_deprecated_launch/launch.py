"""The deprecated launcher `torch.distributed.launch`: where a file uses it (an import, a
`-m torch.distributed.launch` command in a string or an argument list), and the
`--local_rank` argument it passes, read by a script that may not read `LOCAL_RANK` from
the environment."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import PROCESS_STARTERS
from ddplint.domain.ddp_facts import environ_key, last_name
from ddplint.domain.ddp_facts import string_value as _literal_value
from ddplint.domain.launch_commands import (
    commented_out_launch,
    environment_launches,
    launched_as_one_process,
    launched_scripts,
    option_launches,
)
from ddplint.domain.local_rank_option import (
    destination,
    is_assigned,
    local_rank_options,
    unpacked,
)
from ddplint.domain.project_view import ProjectView, project_of
from ddplint.domain.versions import TORCHRUN_SINCE
from ddplint.names import dotted
from ddplint.project.queries import Project
from ddplint.project_files import project_files, project_root

LAUNCH = "torch.distributed.launch"
# `-m torch.distributed.launch` inside a command line.
_LAUNCH_COMMAND = re.compile(r"(^|\s)-m\s+torch\.distributed\.launch(\s|$)")
# A whole command simple enough to rewrite: `python -m torch.distributed.launch --use_env ...`
_REWRITABLE = re.compile(r"^(?:python3?\s+)?-m\s+torch\.distributed\.launch((?:\s+\S+)*)\s*$")
_USE_ENV = frozenset({"--use_env", "--use-env"})
_PROSE_CALLS = frozenset(
    {"print", "debug", "info", "warning", "warn", "error", "exception", "critical", "echo"}
)
_ORDERING = frozenset({"sorted", "list", "enumerate"})
# Calls that write the arguments down (to a file, a log, the screen) as a record.
_RECORDERS = frozenset(
    {"json.dump", "json.dumps", "yaml.dump", "yaml.safe_dump", "print", "pprint.pprint", "str"}
)
_RECORDING_METHODS = frozenset({"info", "debug", "warning", "log", "write", "dump", "save"})
_INSPECTED = (cst.Import, cst.ImportFrom, cst.SimpleString, cst.ConcatenatedString)


def string_value(expr: cst.BaseExpression | None) -> str | None:
    """`facts.string_value`, but None for a literal Python cannot evaluate (a NUL byte
    in the source): every string of the file is read."""
    try:
        return _literal_value(expr)
    except (SyntaxError, ValueError):
        return None


def launch_uses(ctx: FileContext) -> Iterator[cst.CSTNode]:
    """Imports of the launcher and strings that run it (not docstrings, help texts or
    messages, nor a use only on a torch older than `torchrun`: the fallback of
    `if torch >= 1.10: torchrun ... else: python -m torch.distributed.launch ...`)."""
    for node in _mentions(ctx):
        old = domain_of(ctx).versions.old_torch(node)
        if old is None or not old.before(TORCHRUN_SINCE):
            yield node


def _mentions(ctx: FileContext) -> Iterator[cst.CSTNode]:
    for node in ctx.nodes_of(*_INSPECTED, cst.FormattedString):
        if type(node) is cst.Import:
            if any(_is_launch_module(dotted(a.name)) for a in node.names):
                yield node
        elif type(node) is cst.ImportFrom:
            if _imports_launch(node):
                yield node
        elif (
            type(node) is not cst.FormattedString
            and type(ctx.parent(node)) is cst.ConcatenatedString
        ):
            continue  # judged as part of the whole string
        elif _runs_launch(ctx, node) and not _is_docstring(ctx, node) and not _is_prose(ctx, node):
            yield node


def _imports_launch(node: cst.ImportFrom) -> bool:
    module = dotted(node.module) if node.module is not None else None
    if node.relative or module is None:
        return False
    return _is_launch_module(module) or (
        module == "torch.distributed"
        and not isinstance(node.names, cst.ImportStar)
        and any(dotted(a.name) == "launch" for a in node.names)
    )


def _is_launch_module(module: str | None) -> bool:
    """`torch.distributed.launch` or a submodule of it, by whole components: not
    `torch.distributed.launcher` (torchrun's programmatic API, `elastic_launch`)."""
    return module is not None and (module == LAUNCH or module.startswith(LAUNCH + "."))


def _runs_launch(ctx: FileContext, node: cst.CSTNode) -> bool:
    if type(node) is cst.FormattedString:
        text = "".join(p.value for p in node.parts if type(p) is cst.FormattedStringText)
        return bool(_LAUNCH_COMMAND.search(text))
    value = string_value(node)  # type: ignore[arg-type]
    if not value or LAUNCH not in value:
        return False
    if value.strip() == LAUNCH:  # a bare module name: a command only after "-m"
        return type(node) is not cst.SimpleString or _after_dash_m(ctx, node)
    return bool(_LAUNCH_COMMAND.search(value))


def _after_dash_m(ctx: FileContext, node: cst.SimpleString) -> bool:
    """A bare "torch.distributed.launch" element following "-m" in a list/tuple, or passed
    to runpy."""
    element = ctx.parent(node)
    container = ctx.parent(element) if element is not None else None
    if isinstance(container, (cst.List, cst.Tuple)):
        values = [e.value for e in container.elements]
        index = next((i for i, v in enumerate(values) if v is node), None)
        return index is not None and index > 0 and string_value(values[index - 1]) == "-m"
    if type(element) is cst.Arg:
        call = ctx.parent(element)
        return type(call) is cst.Call and ctx.call_name(call) in ("runpy.run_module",)
    return False


def rewritten_command(node: cst.CSTNode) -> str | None:
    """`torchrun ...` for a plain string `python -m torch.distributed.launch --use_env ...`
    (the script already reads LOCAL_RANK from the environment), else None."""
    if type(node) is not cst.SimpleString or "r" in node.prefix.lower():
        return None
    value = string_value(node)
    match = _REWRITABLE.match(value or "")
    if match is None or node.raw_value != value:
        return None
    tokens = match.group(1).split()
    if not any(t in _USE_ENV for t in tokens):
        return None
    return " ".join(["torchrun", *(t for t in tokens if t not in _USE_ENV)])


def _is_docstring(ctx: FileContext, node: cst.CSTNode) -> bool:
    return type(ctx.parent(node)) is cst.Expr


def _is_prose(ctx: FileContext, node: cst.CSTNode) -> bool:
    """A string given as `help=` text or to print/logging/warnings: a mention, not a use."""
    arg = ctx.parent(node)
    if type(arg) is not cst.Arg:
        return False
    if arg.keyword is not None and arg.keyword.value in ("help", "description", "epilog"):
        return True
    call = ctx.parent(arg)
    return type(call) is cst.Call and (last_name(call.func) or "") in _PROSE_CALLS


def device_from_environment(ctx: FileContext) -> bool:
    """The file reads `LOCAL_RANK` from the environment, or calls a project helper that
    does (`utils.init_distributed_mode(args)`): a `--local_rank` argument is a fallback."""
    for node in ctx.nodes_of(cst.Call, cst.Subscript):
        if type(node) is cst.Subscript:
            # `os.environ["LOCAL_RANK"] = str(args.local_rank)` writes it, reads nothing
            candidate = last_name(node.value) == "environ" and not _written(ctx, node)
        elif type(node) is cst.Call:
            candidate = last_name(node.func) in ("get", "getenv")
        else:
            continue
        if candidate and environ_key(ctx, node) == "LOCAL_RANK":
            return True
    project = project_of(ctx)
    return project is not None and any(project.helper_reads_local_rank(ctx, c) for c in ctx.calls)


def local_rank_arguments(ctx: FileContext) -> Iterator[cst.Call]:
    """`parser.add_argument("--local_rank", ...)` calls whose parsed value the file reads;
    an argument only declared (or overwritten before every read, as an `mp.spawn` worker
    does with `args.local_rank = index`) is a leftover that cannot misplace a device."""
    for call, flags in local_rank_options(ctx):
        if _value_is_read(ctx, destination(call, flags)):
            yield call


def options_read_elsewhere(ctx: FileContext) -> Iterator[tuple[cst.Call, str, bool]]:
    """`parser.add_argument("--local_rank", ...)` calls of an options module that does not
    read the value itself, each with a project script importing the module (its text
    import closure) that reads `<namespace>.local_rank` and takes the local rank from
    nowhere else: neither it nor a module it imports reads LOCAL_RANK from the
    environment, assigns the attribute (`params.local_rank = int(os.environ[...])`) or
    declares a local-rank option of its own; and whether the project launches that script
    only as one process (`launched_as_one_process`)."""
    if not os.path.isfile(ctx.path):
        return
    # the text closures only: a file checked without a project view parses nothing more
    project = project_of(ctx) or Project({})
    unread = [
        (call, dest)
        for call, flags in local_rank_options(ctx)
        if not _value_is_read(ctx, dest := destination(call, flags))
    ]
    if not unread:
        return
    path = os.path.abspath(ctx.path)
    files = project_files(project_root(path))
    for call, dest in unread:
        read = re.compile(rf"\.{re.escape(dest)}\b(?!\s*=(?!=))")
        elsewhere = re.compile(
            rf"\.{re.escape(dest)}\s*=(?!=)|{_ENVIRONMENT_READ.pattern}|{_DECLARED.pattern}"
        )
        for other in sorted(files.naming(dest) - {path}):
            if not read.search(files.text(other) or ""):
                continue
            closure = project.text_closure(other) - {path}
            if path in project.text_closure(other) and not any(
                elsewhere.search(files.text(p) or "") for p in [other, *closure]
            ):
                alone = _run_alone(project, other, files.root)
                yield call, os.path.relpath(other, files.root), alone
                break


def _run_alone(project: ProjectView, reader: str, root: str) -> bool:
    """The project launches the module `reader` only as one process: itself, or, for a
    helper module its commands never name, every script they run that imports it."""
    if launched_as_one_process(reader, root):
        return True
    importers = [s for s in launched_scripts(root) if reader in project.text_closure(s)]
    return bool(importers) and all(launched_as_one_process(s, root) for s in importers)


def option_launch(ctx: FileContext) -> str | None:
    """Who the project documents starting this script, or a script importing this file,
    with `python -m torch.distributed.launch` without `--use_env` (the launcher then
    passes the local rank as an option), as a message says it: "`run.sh` starts this
    script". None where no command does, or the file is no file of a project on disk."""
    if not os.path.isfile(ctx.path):
        return None
    root = project_root(ctx.path)
    launches = {
        script: command
        for script, command in option_launches(root).items()
        if not commented_out_launch(root, script)  # a launch documented, not run
    }
    path = os.path.abspath(ctx.path)
    if path in launches:
        return f"`{os.path.relpath(launches[path], root)}` starts this script"
    # the text closures only: a file checked before the project is known parses no more
    project = project_of(ctx) or Project({})
    for script, command in sorted(launches.items()):
        if path in project.text_closure(script):
            shown = os.path.relpath(script, root)
            return (
                f"`{os.path.relpath(command, root)}` starts `{shown}`, which imports this module,"
            )
    return _sibling_launch(root, path, launches)


def _sibling_launch(root: str, path: str, launches: dict[str, str]) -> str | None:
    """A script of this file's folder that the project's commands start with the
    deprecated launcher, where no command starts a script of the folder with torchrun:
    scripts side by side are launched alike (`run_marco.py` documented, `run_nq.py` by
    swapping the name), so torchrun is not the launch this one gets either."""
    folder = os.path.dirname(path)
    siblings = sorted(s for s in launches if os.path.dirname(s) == folder and s != path)
    if not siblings or any(os.path.dirname(s) == folder for s in environment_launches(root)):
        return None
    command = launches[siblings[0]]
    return (
        f"`{os.path.relpath(command, root)}` starts `{os.path.basename(siblings[0])}`, beside "
        "this script (no command starts a script of this folder with torchrun),"
    )


# A local-rank option declared in a module's text.
_DECLARED = re.compile(r"add_argument\(\s*['\"]--local[_-]rank['\"]")
# LOCAL_RANK read from the environment in a module's text (a write is no read).
_ENVIRONMENT_READ = re.compile(
    r"(environ\.get|getenv)\(\s*['\"]LOCAL_RANK"
    r"|environ\[\s*['\"]LOCAL_RANK['\"]\s*\](?!\s*=(?!=))"
)


def _value_is_read(ctx: FileContext, dest: str) -> bool:
    """Whether the file reads the parsed value: `args.local_rank`, `getattr(args,
    "local_rank")`, the whole namespace handed on (`vars(args)`, `args.__dict__`; a
    module's `models.__dict__[args.arch]` is not it, nor a loop listing the arguments, nor
    the attribute of an imported module, `idr_torch.local_rank` or `hvd.local_rank()`).
    A script that is its own launcher, setting the value for each worker it starts
    (`args.local_rank = rank` in the loop that starts a `Process`), never reads it."""
    if _set_per_started_worker(ctx, dest):
        return False
    for node in ctx.nodes_of(cst.Attribute, cst.Call):
        if type(node) is cst.Attribute:
            if (
                node.attr.value == dest
                and ctx.qualname(node.value) not in ctx.imports.modules
                and not _overwritten(ctx, node, dest)
                and not _copied_to_environment(ctx, node)
            ):
                return True
            if node.attr.value == "__dict__" and ctx.qualname(node.value) is None:
                return True
        elif type(node) is cst.Call:
            called = last_name(node.func)
            if (
                called == "vars"
                and not _iterated(ctx, node)
                and not _recorded(ctx, node)
                and not _vars_after_overwrite(ctx, node, dest)
            ):
                return True
            if (
                called == "getattr"
                and len(node.args) >= 2
                and string_value(node.args[1].value) == dest
            ):
                return True
    return False


def _written(ctx: FileContext, node: cst.Subscript) -> bool:
    return type(ctx.parent(node)) is cst.AssignTarget


def _copied_to_environment(ctx: FileContext, node: cst.Attribute) -> bool:
    """`os.environ["LOCAL_RANK"] = str(args.local_rank)`: the value handed to whatever
    reads the environment later (which torchrun sets anyway), not used here."""
    for ancestor in ctx.ancestors(node):
        if type(ancestor) is cst.Assign:
            return any(
                type(t.target) is cst.Subscript
                and last_name(t.target.value) == "environ"
                and ctx.resolver.direct_environ_key(t.target, t.target) == "LOCAL_RANK"
                for t in ancestor.targets
            )
        if isinstance(ancestor, cst.BaseStatement):
            return False
    return False


def _set_per_started_worker(ctx: FileContext, dest: str) -> bool:
    """`x.dest = ...` inside a loop that also starts a process (`Process(...)`,
    `mp.spawn`): each worker gets the value the loop set, not the parsed one."""
    for target in ctx.nodes_of(cst.AssignTarget):
        assigned = target.target  # type: ignore[attr-defined]
        if not (type(assigned) is cst.Attribute and assigned.attr.value == dest):
            continue
        loop = ctx.enclosing_loop(target)
        if loop is not None and any(
            ctx.call_name(call) in PROCESS_STARTERS for call in ctx.calls_within(loop)
        ):
            return True
    return False


def _iterated(ctx: FileContext, namespace: cst.Call) -> bool:
    """`for name in vars(args):`, `{k: v for k, v in vars(args).items() ...}`: a loop over
    the arguments (to print or log them), not a use of one argument's value."""
    source: cst.CSTNode = namespace
    parent = ctx.parent(source)
    if type(parent) is cst.Attribute and parent.attr.value in ("items", "keys", "values"):
        call = ctx.parent(parent)
        if type(call) is cst.Call and call.func is parent and not call.args:
            source, parent = call, ctx.parent(call)
    if type(parent) is cst.Arg:  # `sorted(vars(args))`
        call = ctx.parent(parent)
        if type(call) is cst.Call and last_name(call.func) in _ORDERING and parent is call.args[0]:
            source, parent = call, ctx.parent(call)
    return isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is source


def _overwritten(ctx: FileContext, node: cst.Attribute, dest: str) -> bool:
    """`args.local_rank` assigned here, or read after a statement of the same function body
    that assigns it (`args.local_rank = local_rank` first in a spawned worker): not the
    parsed value."""
    if is_assigned(ctx, node):
        return True
    return _after_assignment(ctx, node, dotted(node.value), dest)


def _recorded(ctx: FileContext, namespace: cst.Call) -> bool:
    """`{"args": vars(args)}` saved with a checkpoint, `json.dump(vars(args), f)`,
    `print(vars(args))`, `logger.info(vars(args))`: the arguments written down as a record,
    not a use of one argument's value."""
    parent = ctx.parent(namespace)
    if type(parent) is cst.DictElement and parent.value is namespace:
        return True
    if type(parent) is not cst.Arg or parent.star:
        return False
    call = ctx.parent(parent)
    if type(call) is not cst.Call:
        return False
    name = ctx.call_name(call) or dotted(call.func) or ""
    return name in _RECORDERS or last_name(call.func) in _RECORDING_METHODS


def _vars_after_overwrite(ctx: FileContext, call: cst.Call, dest: str) -> bool:
    """`vars(args)` (logged, handed to a tracker) after `args.dest` was overwritten: the
    namespace carries the new value, not the parsed one."""
    namespace = call.args[0].value if len(call.args) == 1 else None
    return namespace is not None and _after_assignment(ctx, call, dotted(namespace), dest)


def _after_assignment(ctx: FileContext, node: cst.CSTNode, base: str | None, dest: str) -> bool:
    """`node` comes after a statement of its function's body that assigns `base.dest`."""
    func = ctx.enclosing_function(node)
    if func is None or base is None or type(func.body) is not cst.IndentedBlock:
        return False
    holding = {id(a) for a in ctx.ancestors(node)}
    for statement in func.body.body:
        if id(statement) in holding:
            return False
        if _assigns(statement, base, dest):
            return True
    return False


def _assigns(statement: cst.BaseStatement, base: str, dest: str) -> bool:
    """`base.dest = ...` (also unpacked: `base.dest, base.rank = ...`) as a whole simple
    statement."""
    if type(statement) is not cst.SimpleStatementLine:
        return False
    return any(
        type(small) is cst.Assign
        and any(
            type(bound) is cst.Attribute
            and bound.attr.value == dest
            and dotted(bound.value) == base
            for t in small.targets
            for bound in unpacked(t.target)
        )
        for small in statement.body
    )

"""Whether a checkpoint write overwrites an earlier one: the file it writes (through a file object
opened for writing, or a list of paths walked by a loop), names that change per save,
temporary files moved into place, and saves that repeat (in a loop, or in a helper called
in one) unless the process ends right after them. Values are followed by the engine's
resolver (`Resolver.sources`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from typing import cast

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import facts_of, last_name, string_value
from ddplint.domain.opened_files import is_opener, opened_for_writing
from ddplint.domain.run_constants import same_every_round
from ddplint.domain.runners import call_sites
from ddplint.engine import Value, argument
from ddplint.engine.flow import is_exit_call
from ddplint.names import dotted

_MOVES = frozenset({"os.replace", "os.rename", "shutil.move", "os.link"})
# Calls that run a shell command: `os.system(f"mv {tmp} {path}")`.
_SHELL_RUNNERS = frozenset(
    {"os.system", "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.Popen"}
)
_COUNTER = re.compile(
    r"(^|_)(epoch|epochs|ep|step|steps|global_step|iter|iters|iteration|it|idx|index|count|"
    r"counter|cnt|update|updates|time|timestamp|stamp|date|now|uuid|version|tag|nimg|kimg|i|e|n)"
    r"(_|$)",
    re.IGNORECASE,
)
# The counters of steps alone (`_COUNTER` without tags, versions and time stamps).
_STEP_COUNTER = re.compile(
    r"(^|_)(epoch|epochs|ep|step|steps|global_step|iter|iters|iteration|it|idx|index|count|"
    r"counter|cnt|update|updates|nimg|kimg|i|e|n)(_|$)",
    re.IGNORECASE,
)
_UNIQUE_CALLS = re.compile(r"time|now|strftime|uuid|datetime|mkstemp|NamedTemporaryFile")
# A context manager that yields a temporary path and renames it into place on exit.
_ATOMIC_WRITER = re.compile(r"(?i)rename|atomic|replace|temp|tmp")
_TEMP_TEXT = re.compile(r"tmp|temp|\.part\b|\.partial|~$", re.IGNORECASE)
_OVERWRITTEN_TEXT = re.compile(r"(^|[^a-z])(last|latest|best)([^a-z]|$)", re.IGNORECASE)
_LEAVING = (cst.Return, cst.Break, cst.Continue)
_Block = cst.Module | cst.IndentedBlock | cst.SimpleStatementLine
_REPEATING_OR_DEFERRED = frozenset({cst.For, cst.While, cst.FunctionDef, cst.Lambda, cst.ClassDef})
_ITEM_DEPTH = 6  # nesting levels `item_loops` follows a path's names through


def written_path(
    ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode
) -> tuple[cst.BaseExpression, cst.CSTNode] | None:
    """The path a save into `path` writes and where it is evaluated: the path itself, or
    for a file object opened for writing on a path (`with open(p, "wb") as f:`,
    `g_pathmgr.open(p, "wb")`, `Path(p).open("wb")`) that path at the `open` call. None
    for a file object opened otherwise (appending, unknown mode): the caller manages it."""
    for value in ctx.resolver.values(path, at):
        if type(value.expr) is cst.Call and is_opener(ctx, value.expr):
            opened = opened_for_writing(ctx, value.expr)
            return None if opened is None else (opened[0], value.expr)
    return path, at


def walked_paths(
    ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode
) -> tuple[cst.For, list[tuple[cst.BaseExpression, cst.CSTNode]]] | None:
    """`for p in paths: torch.save(state, p)`: the loop and the paths of the list it walks
    (the elements of a list literal, and what `paths.append(...)` adds before the loop),
    each with where it is evaluated. None when `path` is no such loop's variable or the
    list's elements are not all known."""
    loop = next(
        (
            a
            for a in ctx.ancestors(at)
            if type(a) is cst.For
            and type(a.target) is cst.Name
            and type(path) is cst.Name
            and a.target.value == path.value
        ),
        None,
    )
    if loop is None:
        return None
    elements: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
    for value in ctx.resolver.values(loop.iter, loop):
        if isinstance(value.expr, (cst.List, cst.Tuple)):
            if any(type(e) is cst.StarredElement for e in value.expr.elements):
                return None
            elements.extend((e.value, value.at) for e in value.expr.elements)
        elif value.leaf and type(value.expr) is not cst.Name:
            return None  # a list built elsewhere: its paths are unknown
    receiver = ctx.code(loop.iter).strip()
    for call in ctx.method_calls("append", "extend", "insert"):
        func = call.func
        assert type(func) is cst.Attribute
        if ctx.code(func.value).strip() != receiver or ctx.scope(call) is not ctx.scope(loop):
            continue
        if func.attr.value != "append" or len(call.args) != 1:
            return None
        elements.append((call.args[0].value, call))
    return (loop, elements) if elements else None


def path_texts(
    ctx: FileContext,
    path: cst.BaseExpression,
    at: cst.CSTNode,
    skip: cst.CSTNode | None = None,
    within: cst.FunctionDef | None = None,
) -> list[str]:
    """The string pieces of the path and of the names it is built from, one level deep
    (`skip`, `within`: as `scoped`). A subscript's key
    is no piece of a path (`state["last_epoch"]` holds a number)."""
    texts = []
    for value in ctx.resolver.sources(path, at, 1, scoped(ctx, skip, within)):
        keys = {
            id(n)
            for sub in ctx.walk(value.expr)
            if type(sub) is cst.SubscriptElement
            for n in ctx.walk(sub)
        }
        for node in ctx.walk(value.expr):
            if id(node) in keys:
                continue
            text = string_value(node) if isinstance(node, cst.BaseExpression) else None
            if text is not None:
                texts.append(text)
            elif type(node) is cst.FormattedStringText:
                texts.append(node.value)
    return texts


def from_atomic_writer(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`with write_and_rename(final) as tmp: torch.save(state, tmp)`: the path is what a
    context manager named for an atomic write yields (a temporary file it renames onto
    the final path on exit)."""
    if type(path) is not cst.Name:
        return False
    for binding in ctx.resolver.reaching(path.value, at):
        value = binding.value
        if binding.kind == "with" and type(value) is cst.Call:
            name = last_name(value.func) or ""
            if _ATOMIC_WRITER.search(name):
                return True
    return False


def is_temporary(texts: list[str]) -> bool:
    """A `.tmp` / `temp` / `.part` path: the file is moved into place afterwards."""
    return any(_TEMP_TEXT.search(t) for t in texts)


def names_overwritten_file(texts: list[str]) -> bool:
    """A `last.pt` / `latest` / `best.pth`-style file name: overwritten by design."""
    return any(_OVERWRITTEN_TEXT.search(t.rsplit("/", 1)[-1]) for t in texts)


def scoped(
    ctx: FileContext, skip: cst.CSTNode | None = None, within: cst.FunctionDef | None = None
) -> Callable[[Value], bool] | None:
    """A filter for `Resolver.sources`: not through the values computed inside `skip` (the
    fallback `if filename is None: filename = f"ckpt_{epoch}.pth"` a caller passing
    `filename` never runs), nor (`within`) through those computed outside that function
    but at module level (what the function's callers in this file pass: `within` is the
    function as any caller runs it). None: no filter."""
    if skip is None and within is None:
        return None

    def keep(value: Value) -> bool:
        at = value.at
        if skip is not None and ctx.is_inside(at, skip):
            return False
        return within is None or ctx.is_inside(at, within) or ctx.scope(at) is ctx.module

    return keep


def varies_per_save(
    ctx: FileContext,
    path: cst.BaseExpression,
    at: cst.CSTNode,
    depth: int | None = 3,
    skip: cst.CSTNode | None = None,
    within: cst.FunctionDef | None = None,
    passed: bool = False,
) -> bool:
    """Something the path is built from changes per save: an epoch or step counter, a
    time stamp, a variable of a loop around the save in its function (a caller's loop:
    `item_loops`), a number formatted as `{n:06d}` (`depth` levels of names deep:
    `eval_dir = join(out, str(iteration))`; None: the path expression alone, or the
    expressions a name holding it is bound to: `path = join(out, f"best_{epoch}.pt")`;
    `skip`, `within`: as `scoped`). `passed`: `path` is what a call of the save's
    function passes at `at`, whose loops are a caller's."""
    around = set() if passed else _loop_targets(ctx, at)
    keep = scoped(ctx, skip, within)
    if depth is not None:
        values = ctx.resolver.sources(path, at, depth, keep)
    elif type(path) is cst.Name:
        # What the name is bound to: only a counter of steps varies there (a run tag
        # or version stays the same within a run).
        bound = [
            v
            for v in ctx.resolver.values(path, at)
            if v.expr is not path and (keep is None or keep(v))
        ]
        if any(_varies_in(ctx, v.expr, around, _STEP_COUNTER) for v in bound):
            return True
        values = []
    else:
        values = []
    if depth is None and _named_piece_varies(ctx, path, at, around, keep):
        return True
    return any(
        _varies_in(ctx, value.expr, around, _COUNTER)
        if not _once_per_round(ctx, value.at, at)
        else _varies_in(ctx, value.expr, around, _STEP_COUNTER, stamps=False)
        for value in values or [Value(path, at, True)]
        # evaluated once per process before the loop: the same for every save, whatever
        # its names say (`epochs = args.epochs`, a run folder stamped in the option parser)
        if not same_every_round(ctx, value.at)
    )


def _named_piece_varies(
    ctx: FileContext,
    path: cst.BaseExpression,
    at: cst.CSTNode,
    around: set[str],
    keep: Callable[[Value], bool] | None,
) -> bool:
    """The piece of the path that holds its `last` / `best` name holds a counter of steps
    too (`"best-{}".format(state["epoch"])`, `f"best_{epoch}"`): each save names its own
    folder or file."""
    return any(
        _varies_in(ctx, piece, around, _STEP_COUNTER, False)
        for piece in _named_pieces(ctx, path, at, keep)
    )


def named_piece_computed(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The piece of the path that holds its `last` / `best` name holds a value computed by
    a call (`"checkpoints-last-" + str(acc)`): written once, it names a file of this run
    only. A setting read as it is (`f"last_{args.model_type}.ckpt"`) is no such value."""
    return any(
        type(n) is cst.Call and not _formats_literal(n)
        for piece in _named_pieces(ctx, path, at, None)
        for part in _last_component(piece)
        for n in ctx.walk(part)
    )


def _formats_literal(call: cst.Call) -> bool:
    """`"last_{}".format(...)`: the string's own formatting, no computed value."""
    func = call.func
    return type(func) is cst.Attribute and string_value(func.value) is not None


def _last_component(piece: cst.CSTNode) -> list[cst.CSTNode]:
    """The parts of an f-string or a concatenation after its last `/` (`f"{out}/best_{x}"`:
    `best_`, `{x}`); the piece itself otherwise."""
    if type(piece) is cst.FormattedString:
        parts: list[cst.CSTNode] = list(piece.parts)
    elif type(piece) is cst.BinaryOperation and type(piece.operator) is cst.Add:
        parts, stack = [], [cast("cst.BaseExpression", piece)]
        while stack:  # the operands, left to right
            node = stack.pop()
            if type(node) is cst.BinaryOperation and type(node.operator) is cst.Add:
                stack += [node.right, node.left]
            else:
                parts.append(node)
    else:
        return [piece]
    tail: list[cst.CSTNode] = []
    for part in parts:
        text = part.value if type(part) is cst.FormattedStringText else None
        if isinstance(part, cst.BaseExpression):
            text = string_value(part)
        if text is not None and "/" in text:
            tail = []
        else:
            tail.append(part)
    return tail


def _named_pieces(
    ctx: FileContext,
    path: cst.BaseExpression,
    at: cst.CSTNode,
    keep: Callable[[Value], bool] | None,
) -> list[cst.CSTNode]:
    """The pieces (`_piece`) of the path that hold a `last` / `best` name and more."""
    pieces = []
    for value in ctx.resolver.sources(path, at, 3, keep):
        for node in ctx.walk(value.expr):
            text = string_value(node) if isinstance(node, cst.BaseExpression) else None
            if type(node) is cst.FormattedStringText:
                text = node.value
            if text is None or not _OVERWRITTEN_TEXT.search(text):
                continue
            piece = _piece(ctx, node, value.expr)
            if piece is not node:
                pieces.append(piece)
    return pieces


def _piece(ctx: FileContext, node: cst.CSTNode, top: cst.BaseExpression) -> cst.CSTNode:
    """The expression a string literal is part of up to a path separator: its f-string, a
    concatenation, a `"...".format(...)` call; not a call it is an argument of."""
    piece = node
    for parent in ctx.ancestors(node):
        if (
            isinstance(
                parent, (cst.FormattedString, cst.BinaryOperation, cst.FormattedStringExpression)
            )
            or (type(parent) is cst.Attribute and parent.value is piece)
            or (type(parent) is cst.Call and parent.func is piece)
        ):
            piece = parent
        elif type(parent) is not cst.FormattedStringText:
            break
        if parent is top:
            break
    return piece


def _once_per_round(ctx: FileContext, value_at: cst.CSTNode, at: cst.CSTNode) -> bool:
    """A value evaluated at `value_at` is the same for every save at `at` within one run of
    the save's innermost loop: evaluated at module level (once per process), or in the
    save's function outside that loop (`run = f"{name}-{now():%H%M%S}"` before the epoch
    loop: a time stamp of the run, not of the save)."""
    scope = ctx.scope(value_at)
    if scope is ctx.module:
        return True
    loop = ctx.enclosing_loop(at)
    return loop is not None and scope is ctx.scope(at) and not ctx.is_inside(value_at, loop)


def _varies_in(
    ctx: FileContext,
    expr: cst.CSTNode,
    around: set[str],
    counter: re.Pattern[str],
    stamps: bool = True,
) -> bool:
    """Something in `expr` changes per save: a counter, a loop variable around the save,
    a number formatted as an integer, a slot picked by `%`, or (`stamps`) a time stamp or
    unique id."""
    for node in ctx.walk(expr):
        if _counter_format(node) or _rotates(node):
            return True
        if stamps and type(node) is cst.Call and _UNIQUE_CALLS.search(dotted(node.func) or ""):
            return True
        if type(node) is cst.Attribute and counter.search(node.attr.value):
            return True
        if type(node) is cst.SubscriptElement and type(node.slice) is cst.Index:
            key = string_value(node.slice.value)
            if key is not None and counter.search(key):
                return True  # `state["epoch"]`
        if type(node) is cst.Name and (node.value in around or counter.search(node.value)):
            parent = ctx.parent(node)
            if not (type(parent) is cst.Attribute and parent.value is not node):
                return True  # `args.epochs`: the attribute's own name decides, above
    return False


def _rotates(node: cst.CSTNode) -> bool:
    """`n % keep` (not `"%d" % n`): the name cycles over `keep` slots, so each save writes
    another file than the one before it (`chkpt_{train_cnt % max_save + 1}.pt`)."""
    return (
        type(node) is cst.BinaryOperation
        and type(node.operator) is cst.Modulo
        and string_value(node.left) is None
        and not isinstance(node.left, (cst.FormattedString, cst.ConcatenatedString))
    )


def item_loops(ctx: FileContext, path: cst.BaseExpression, at: cst.CSTNode) -> set[cst.For]:
    """The loops whose variable the path is built from, followed further than
    `varies_per_save` does and through the objects of method calls (`shard_id =
    match.group(1)` with `match` from `for shard in shards:`; a parameter to what its
    callers pass in their loops): each round of them writes a file of its own."""
    loops: set[cst.For] = set()
    frontier: list[tuple[cst.BaseExpression, cst.CSTNode]] = [(path, at)]
    seen: set[int] = set()
    for _ in range(_ITEM_DEPTH):
        inner: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
        for expr, where in frontier:
            for value in ctx.resolver.sources(expr, where, 1):
                if id(value.expr) in seen:
                    continue
                seen.add(id(value.expr))
                if type(value.expr) is cst.Name:
                    loops.update(_loops_over(ctx, value.expr.value, value.at))
                    inner.append((value.expr, value.at))
                    inner.extend((a, a) for a in _passed(ctx, value.expr.value, value.at))
                elif type(value.expr) is cst.Attribute:
                    root: cst.BaseExpression = value.expr
                    while type(root) is cst.Attribute:
                        root = root.value
                    inner.append((root, value.at))
                else:
                    inner.append((value.expr, value.at))
        frontier = inner
    return loops


def _passed(ctx: FileContext, name: str, at: cst.CSTNode) -> list[cst.BaseExpression]:
    """What the calls of its function in this file pass for the parameter `name`, method
    calls through a class or an object included (`Loader.save_slice(path, key)`)."""
    binding = facts_of(ctx).reaching_binding(name, at)
    func = binding.statement if binding is not None and binding.kind == "param" else None
    if type(func) is not cst.FunctionDef:
        return []
    names = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    index = names.index(name) if name in names else None
    if index is not None and names[0] in ("self", "cls"):
        if index == 0:
            return []  # the object itself, never in the argument list
        index -= 1
    passed = (argument(site, index, name) for site in call_sites(ctx, func))
    return [value for value in passed if value is not None]


def _loops_over(ctx: FileContext, name: str, at: cst.CSTNode) -> list[cst.For]:
    """The `for` loops around `at` in its function whose target binds `name`."""
    found = []
    for ancestor in ctx.ancestors(at):
        if type(ancestor) is cst.FunctionDef:
            break
        if type(ancestor) is cst.For and any(
            type(n) is cst.Name and n.value == name for n in ctx.walk(ancestor.target)
        ):
            found.append(ancestor)
    return found


def moved_after(ctx: FileContext, call: cst.Call, path: cst.BaseExpression) -> bool:
    """A later `os.replace(path, ...)` / `Path(path).replace(...)` / shell `mv path ...` in
    the same function, of the file or of the folder it is written in (a checkpoint folder
    filled under a temporary name, then renamed)."""
    path_code = ctx.code(path).strip()
    root = (dotted(path) or "").split(".")[0]
    for other in ctx.model.calls_by_frame(ctx.scope(call)):
        if not ctx.before(call, other):
            continue
        func = other.func
        called = ctx.call_name(other) or dotted(func) or ""
        if called in _SHELL_RUNNERS:
            if _shell_moves(ctx, other, path):
                return True
            continue
        if called in _MOVES:
            subject = other.args[0].value if other.args else None
        elif type(func) is cst.Attribute and func.attr.value in ("replace", "rename"):
            subject = func.value if len(other.args) == 1 else None
        else:
            continue
        if subject is not None and (
            ctx.code(subject).strip() == path_code
            or (root and root in set(ctx.names_in(subject)))
            or _folder_of(ctx, subject, path)
        ):
            return True
    return False


def _shell_moves(ctx: FileContext, call: cst.Call, path: cst.BaseExpression) -> bool:
    """`call` runs `mv <path> <elsewhere>` in a shell, written with the same text as the
    string `path` (`os.system(f"mv {folder}/model.pth {folder}/model_bak.pth")` after
    `torch.save(state, f"{folder}/model.pth")`), or as a list (`["mv", path, dest]`)."""
    if not call.args:
        return False
    command = call.args[0].value
    if isinstance(command, (cst.List, cst.Tuple)):
        parts = [e.value for e in command.elements]
        return (
            len(parts) == 3
            and string_value(parts[0]) == "mv"
            and ctx.code(parts[1]).strip() == ctx.code(path).strip()
        )
    inner = _string_text(ctx, command)
    saved = _string_text(ctx, path)
    if inner is None or saved is None:
        return False
    words = inner.split()
    return len(words) == 3 and words[0] == "mv" and words[1] == saved


def _string_text(ctx: FileContext, expr: cst.BaseExpression) -> str | None:
    """The text between the quotes of a plain or f-string literal, as written."""
    if not isinstance(expr, (cst.SimpleString, cst.FormattedString)):
        return None
    code = ctx.code(expr).strip()
    body = code.lstrip("rRbBfFuU")
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    return body[len(quote) : len(body) - len(quote)] if body.endswith(quote) else None


def _folder_of(ctx: FileContext, subject: cst.BaseExpression, path: cst.BaseExpression) -> bool:
    """`subject` names the folder the path is built in (`folder / "trainer"`,
    `os.path.join(folder, "model.pt")`): moving the folder commits the file with it."""
    return type(subject) is cst.Name and subject.value in set(ctx.names_in(path))


def repeats(
    ctx: FileContext,
    node: cst.CSTNode,
    depth: int = 2,
    walking: Collection[cst.For] = (),
    raising: bool = False,
) -> bool:
    """`node` runs more than once per run: inside a loop of its function (but the loops of
    `walking`, each round of which writes its own path), or in a function called in one.
    Not when a condition fixes a counter (`if step == save_step:`, or after
    `if step != save_step: return`), nor when the process ends right after it
    (`exits_after`), nor when an exception is raised right after it that nothing in sight
    catches and carries on from (`raises_after`: a debug dump before `raise
    RuntimeError("loss is NaN")` runs at most once per process), nor past a function that
    runs a training loop itself: its callers' loops repeat whole runs (hyper-parameter
    search), not saves within one. `raising`: `node` is a call whose callee raises so."""
    if at_one_step(ctx, node) or exits_after(ctx, node):
        return False
    # An exception raised right after `node` (or after the call it runs in) leaves every
    # loop up to the first `try` that catches it and carries on.
    raising = (raising and not caught(ctx, node)) or raises_after(ctx, node)
    if not raising and _repeats_in_function(ctx, node, walking):
        return True
    func = ctx.enclosing_function(node)
    if func is None or depth == 0 or _trains(ctx, func):
        return False
    return any(
        repeats(ctx, site, depth - 1, walking, raising)
        for site in call_sites(ctx, func)
        if not ctx.is_inside(site, func)
    )


def repeats_in_call(
    ctx: FileContext, node: cst.CSTNode, site: cst.Call, walking: Collection[cst.For] = ()
) -> bool:
    """`node` runs more than once per run when its function is called at `site` (as
    `repeats`, through that one call of its function)."""
    if at_one_step(ctx, node) or exits_after(ctx, node):
        return False
    raising = raises_after(ctx, node)
    if not raising and _repeats_in_function(ctx, node, walking):
        return True
    func = ctx.enclosing_function(node)
    return func is not None and not _trains(ctx, func) and repeats(ctx, site, 1, walking, raising)


def _repeats_in_function(ctx: FileContext, node: cst.CSTNode, walking: Collection[cst.For]) -> bool:
    """A loop of its function around `node` (but those of `walking`) runs it again: not
    when its function returns right after it (`save(...); return`), nor the loop that a
    `break` right after it leaves (a retry loop: `try: save(...); break`)."""
    if exits_after(ctx, node, (cst.Return,)):
        return False
    loop = round_loop(ctx, node)
    while loop is not None and loop in walking:
        loop = ctx.enclosing_loop(loop)
    return loop is not None


def round_loop(ctx: FileContext, node: cst.CSTNode) -> cst.For | cst.While | None:
    """The innermost loop of `node`'s function that runs it again: not the loop that a
    `break` right after it leaves (a retry loop: `for _ in range(3): try: save(...);
    break`)."""
    loop = ctx.enclosing_loop(node)
    if loop is not None and exits_after(ctx, node, (cst.Break,)):
        loop = ctx.enclosing_loop(loop)
    return loop


def exits_after(
    ctx: FileContext, node: cst.CSTNode, leaving: tuple[type[cst.CSTNode], ...] = ()
) -> bool:
    """The process ends right after `node`: a later statement of its block, or of a block
    around it inside its loop and function, exits on every path (`quit()`, `sys.exit()`,
    `os._exit()`, `raise SystemExit`) with no `return` / `break` / `continue` between.
    So `node` runs once per run however often its loop would go round. `leaving`: or a
    statement of these kinds follows (`cst.Return`: `node` runs once per call of its
    function; `cst.Break`: once per run of its innermost loop)."""
    child = node
    for ancestor in ctx.ancestors(node):
        kind = type(ancestor)  # exact types: no slow ABC `isinstance` misses
        if kind in _REPEATING_OR_DEFERRED:
            return False
        if kind is cst.Module or kind is cst.IndentedBlock or kind is cst.SimpleStatementLine:
            body = list(cast("_Block", ancestor).body)
            index = next((i for i, s in enumerate(body) if s is child), len(body))
            for later in body[index + 1 :]:
                if _exits(ctx, later, leaving):
                    return True
                if ctx.nodes_within(later, *_LEAVING):
                    return False
        child = ancestor
    return False


def raises_after(ctx: FileContext, node: cst.CSTNode) -> bool:
    """An exception leaves `node`'s function right after it: a later statement raises (or
    ends the process) on every path, with no `return` / `break` / `continue` between, and
    no `try` of the function around `node` catches it and carries on. So `node` runs at
    most once per call, and again only where a caller catches the exception (`caught`)."""
    return exits_after(ctx, node, (cst.Raise,)) and not caught(ctx, node)


def before_error(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs right before an exception leaves its function (`raises_after`), not
    before a deliberate exit: a diagnostic written on an error path (the batch and weights
    dumped before `raise RuntimeError("loss is NaN")`), whose writers are the ranks that
    meet the error, a set that depends on the data."""
    return raises_after(ctx, node) and not exits_after(ctx, node)


def caught(ctx: FileContext, node: cst.CSTNode) -> bool:
    """An exception raised at `node` may be caught inside its function by a `try` whose
    handler carries on (one that does not raise again or end the process)."""
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if (
            isinstance(ancestor, (cst.Try, cst.TryStar))
            and ctx.is_inside(node, ancestor.body)
            and any(not _exits_block(ctx, h.body, (cst.Raise,)) for h in ancestor.handlers)
        ):
            return True
    return False


def _exits(
    ctx: FileContext, statement: cst.CSTNode, leaving: tuple[type[cst.CSTNode], ...] = ()
) -> bool:
    """Running `statement` ends the process (or runs a statement of `leaving`) on every
    path."""
    if type(statement) is cst.SimpleStatementLine:
        return any(_exits(ctx, s, leaving) for s in statement.body)
    if isinstance(statement, leaving):
        return True
    if type(statement) is cst.Raise:
        raised = statement.exc.func if type(statement.exc) is cst.Call else statement.exc
        return raised is not None and last_name(raised) == "SystemExit"
    if type(statement) is cst.Expr:
        return is_exit_call(statement, ctx.qualname)
    if type(statement) is cst.If:
        orelse = statement.orelse
        other = orelse.body if type(orelse) is cst.Else else orelse
        return (
            other is not None
            and _exits_block(ctx, statement.body, leaving)
            and _exits(ctx, other, leaving)
        )
    if type(statement) is cst.With:
        return _exits_block(ctx, statement.body, leaving)
    if type(statement) is cst.IndentedBlock:
        return _exits_block(ctx, statement, leaving)
    return False


def _exits_block(
    ctx: FileContext, block: cst.BaseSuite, leaving: tuple[type[cst.CSTNode], ...]
) -> bool:
    return any(_exits(ctx, s, leaving) for s in block.body)


def _trains(ctx: FileContext, func: cst.FunctionDef) -> bool:
    loops = domain_of(ctx).loops
    return any(
        isinstance(loop, (cst.For, cst.While))
        and ctx.scope(loop) is func
        and loops.is_training_loop(loop)
        for loop in ctx.model.within(func, ctx.nodes_of(cst.For, cst.While))
    )


def at_one_step(ctx: FileContext, node: cst.CSTNode) -> bool:
    """A condition `node` runs under fixes a counter to one value (`step == save_step`),
    or picks the rounds of a loop around it by the loop's own variable (`for swa in
    stages: if swa: save(a) else: save(b)`, `if stage == "final":`): one round per value,
    not a save the loop repeats."""
    targets = _loop_targets(ctx, node)
    for condition in ctx.flow.conditions(node):
        for term, value in condition.terms():
            if _picks_round(term, value, targets):
                return True
            if type(term) is not cst.Comparison or len(term.comparisons) != 1:
                continue
            operator = term.comparisons[0].operator
            equal = type(operator) is cst.Equal if value else type(operator) is cst.NotEqual
            sides = (term.left, term.comparisons[0].comparator)
            if equal and any(_COUNTER.search(last_name(side) or "") for side in sides):
                return True
    return False


def _picks_round(term: cst.BaseExpression, holds: bool, targets: set[str]) -> bool:
    """`term` is a loop variable tested whole (`if swa:`, not a counter such as `if epoch:`)
    or compared equal to a literal (`stage == "final"`, `swa is True`)."""
    if type(term) is cst.Name:
        return term.value in targets and not _COUNTER.search(term.value)
    if not holds or type(term) is not cst.Comparison or len(term.comparisons) != 1:
        return False
    if not isinstance(term.comparisons[0].operator, (cst.Equal, cst.Is)):
        return False
    sides = (term.left, term.comparisons[0].comparator)
    return any(type(side) is cst.Name and side.value in targets for side in sides) and any(
        isinstance(side, (cst.SimpleString, cst.Integer))
        or (type(side) is cst.Name and side.value in ("True", "False", "None"))
        for side in sides
    )


def _loop_targets(ctx: FileContext, node: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    for ancestor in ctx.ancestors(node):
        if type(ancestor) is cst.For:
            names.update(n.value for n in ctx.walk(ancestor.target) if type(n) is cst.Name)
        if type(ancestor) is cst.FunctionDef:
            break
    return names


def _counter_format(node: cst.CSTNode) -> bool:
    """`{step:06d}`: a number formatted as an integer, a counter in a file name."""
    if type(node) is not cst.FormattedStringExpression or not node.format_spec:
        return False
    spec = "".join(p.value for p in node.format_spec if type(p) is cst.FormattedStringText)
    return spec.endswith("d")

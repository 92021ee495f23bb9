"""What an argparse parser of one file accepts of the local rank a launcher passes: the
spellings of its `--local_rank` options, whether one is required, and whether the file
parses the whole command line strictly (`parser.parse_args()`, which exits on an option it
does not know)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import keyword
from ddplint.domain.local_rank_option import is_assigned

_PARSERS = frozenset({"argparse.ArgumentParser"})


def declared_on_some_paths(ctx: FileContext, call: cst.Call) -> bool:
    """The option is declared under a condition other than `__name__ == "__main__"` (only
    on torch 1.x, only for one launcher): not proven to be what the launch meets."""
    return any("__main__" not in ctx.code(c.test) for c in ctx.flow.conditions(call))


def strict_parse(ctx: FileContext) -> cst.Call | None:
    """The file's `parser.parse_args()` of the whole command line, for a parser the file
    builds with `argparse.ArgumentParser`; None when the file also parses leniently
    (`parse_known_args`, `parse_intermixed_args`, an `argparse.REMAINDER` argument), passes
    its own list, or builds no parser."""
    if not any(ctx.call_name(c) in _PARSERS for c in ctx.calls):
        return None
    if any(ctx.method_calls("parse_known_args", "parse_known_intermixed_args")):
        return None
    if any(_takes_the_rest(ctx, call) for call in ctx.method_calls("add_argument")):
        return None
    found = None
    for call in ctx.method_calls("parse_args"):
        if call.args and not _none(call.args[0].value):
            return None  # a list of its own (`parse_args(sys.argv[2:])`): not the launch's
        found = found or call
    return found


def _takes_the_rest(ctx: FileContext, call: cst.Call) -> bool:
    """`add_argument(..., nargs=argparse.REMAINDER)`: the rest of the line, options too."""
    nargs = keyword(call, "nargs")
    return nargs is not None and ctx.qualname(nargs.value) == "argparse.REMAINDER"


def _none(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "None"


def default_of(call: cst.Call) -> cst.BaseExpression | None:
    """The `default=` of an `add_argument` call (None: argparse's None)."""
    given = keyword(call, "default")
    return given.value if given is not None else None


def read_as_parsed(ctx: FileContext, dest: str) -> bool:
    """The file reads `<namespace>.<dest>` and never assigns it (an assignment, such as
    `args.local_rank = int(os.environ["LOCAL_RANK"])`, `args.local_rank, args.rank, ... =
    world_info_from_env()` or a spawned worker's index, replaces the parsed value)."""
    read = False
    for node in ctx.nodes_of(cst.Attribute):
        if type(node) is not cst.Attribute or node.attr.value != dest:
            continue
        if is_assigned(ctx, node):
            return False
        read = True
    return read

"""Subcommands of a script's command line: the functions a user runs one at a time, each as
its own process (`python main.py download`, `torchrun main.py train`, `python check.py
--mode single`)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.command_line import same_on_every_rank
from ddplint.domain.ddp_facts import last_name


def subcommands(ctx: FileContext) -> list[cst.FunctionDef]:
    """Functions of this file the command line dispatches to by name: the values of a
    `fire.Fire({"download": download, ...})` table, functions decorated with a click or
    typer `@group.command()`, argparse handlers (`sub.set_defaults(func=download)`), and
    functions called only on the branches of a test of one option against a word (`if
    args.mode == "single": single_run(args) elif args.mode == "dist": dist_run(args)`)."""
    names: list[str] = _dispatched_by_option(ctx)
    for call in ctx.calls_to("fire.Fire"):
        table = call.args[0].value if call.args else None
        if type(table) is cst.Dict:
            names.extend(
                element.value.value
                for element in table.elements
                if type(element) is cst.DictElement and type(element.value) is cst.Name
            )
    for call in ctx.method_calls("set_defaults"):
        names.extend(
            arg.value.value
            for arg in call.args
            if arg.keyword is not None and type(arg.value) is cst.Name
        )
    found = [
        func
        for name in dict.fromkeys(names)
        for func in ctx.model.functions.get(name, [])
        if ctx.parent(func) is ctx.module
    ]
    for funcs in ctx.model.functions.values():
        found.extend(func for func in funcs if _decorated_command(func) and func not in found)
    return found


def _decorated_command(func: cst.FunctionDef) -> bool:
    """`@cli.command()`, `@click.command("name")`, `@app.command`."""
    for decorator in func.decorators:
        expr = decorator.decorator
        target = expr.func if type(expr) is cst.Call else expr
        if last_name(target) == "command":
            return True
    return False


def _dispatched_by_option(ctx: FileContext) -> list[str]:
    """Functions of this file whose every call in the file is a statement of a branch
    chosen by comparing a command-line option with a word (`if args.mode == "single":
    single_run(args)`): which one runs is the user's choice, the same on every rank."""
    chosen: dict[str, int] = {}
    for node in ctx.nodes_of(cst.If):
        if type(node) is not cst.If or not _option_choice(ctx, node):
            continue
        body = node.body
        lines = body.body if type(body) is cst.IndentedBlock else [body]
        for line in lines:
            if not isinstance(line, cst.SimpleStatementLine | cst.SimpleStatementSuite):
                continue  # a compound statement: its calls run under a test of their own
            for small in line.body:
                value = small.value if type(small) is cst.Expr else None
                if type(value) is cst.Call and type(value.func) is cst.Name:
                    chosen[value.func.value] = chosen.get(value.func.value, 0) + 1
    return [
        name
        for name, count in chosen.items()
        if count == sum(1 for c in ctx.calls if type(c.func) is cst.Name and c.func.value == name)
    ]


def _option_choice(ctx: FileContext, node: cst.If) -> bool:
    """`node` tests `option == "word"` (either way round) on a command-line option."""
    test = node.test
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if type(target.operator) is not cst.Equal:
        return False
    sides = (test.left, target.comparator)
    words = [s for s in sides if type(s) is cst.SimpleString]
    options = [s for s in sides if type(s) is cst.Attribute]
    return len(words) == 1 and len(options) == 1 and same_on_every_rank(ctx, options[0], node)

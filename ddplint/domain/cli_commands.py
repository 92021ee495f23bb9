"""Subcommands of a script's command line: the functions a user runs one at a time, each as
its own process (`python main.py download`, `torchrun main.py train`)."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.ddp_facts import last_name


def subcommands(ctx: FileContext) -> list[cst.FunctionDef]:
    """Functions of this file the command line dispatches to by name: the values of a
    `fire.Fire({"download": download, ...})` table, functions decorated with a click or
    typer `@group.command()`, and argparse handlers (`sub.set_defaults(func=download)`)."""
    names: list[str] = []
    for call in ctx.calls_to("fire.Fire"):
        table = call.args[0].value if call.args else None
        if isinstance(table, cst.Dict):
            names.extend(
                element.value.value
                for element in table.elements
                if isinstance(element, cst.DictElement) and isinstance(element.value, cst.Name)
            )
    for call in ctx.method_calls("set_defaults"):
        names.extend(
            arg.value.value
            for arg in call.args
            if arg.keyword is not None and isinstance(arg.value, cst.Name)
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
        target = expr.func if isinstance(expr, cst.Call) else expr
        if last_name(target) == "command":
            return True
    return False

"""Checkpoint saves: `torch.save(obj, ...)`, calls of saving helpers (of this file, of the
project, or named like one), and the `.state_dict()` calls whose result the saved object
holds."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import RANK_AWARE_SAVES
from ddplint.domain.ddp_facts import argument, facts_of
from ddplint.domain.project_view import project_of
from ddplint.names import dotted

_SAVE_HELPER = re.compile(r"^(save_on_master|save_on_main|save_checkpoint|save_ckpt)$")


def _state_dict_receivers(ctx: FileContext, expr: cst.BaseExpression) -> Iterator[cst.Call]:
    """`x.state_dict()` calls inside `expr` (a dict, a list, the call itself)."""
    for node in ctx.walk(expr):
        if (
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and node.func.attr.value == "state_dict"
            and not node.args
        ):
            yield node


def saved_state_dicts(
    ctx: FileContext, obj: cst.BaseExpression, at: cst.CSTNode
) -> Iterator[cst.Call]:
    """The `.state_dict()` calls whose result `obj` holds at `at`: written inline, in the
    dict a variable is bound to, or stored later with `ckpt["model"] = ...`."""
    yield from _state_dict_receivers(ctx, obj)
    name = dotted(obj)
    if name is None:
        return
    binding = facts_of(ctx).reaching_binding(name, at)
    if binding is not None and binding.kind == "assign":
        yield from _state_dict_receivers(ctx, binding.value)
    scope = ctx.scope(at)
    for call in ctx.method_calls("state_dict"):
        if call.args or ctx.scope(call) is not scope or not ctx.before(call, at):
            continue
        statement = ctx.statement(call)
        if type(statement) is cst.Assign:
            for target in statement.targets:
                node = target.target
                if type(node) is cst.Subscript and dotted(node.value) == name:
                    yield call
        elif type(statement) is cst.Expr:
            # `ckpt.update(model=model.state_dict())`
            argument_node = ctx.parent(call)
            parent = ctx.parent(argument_node) if argument_node is not None else None
            if (
                type(parent) is cst.Call
                and type(parent.func) is cst.Attribute
                and parent.func.attr.value == "update"
                and dotted(parent.func.value) == name
            ):
                yield call


def chooses_writers(ctx: FileContext, call: cst.Call) -> bool:
    """A library save that decides itself which ranks write (`save_fsdp_model`, a
    distributed checkpoint's `save`): every rank is meant to call it."""
    return ctx.call_name(call) in RANK_AWARE_SAVES


def save_sites(ctx: FileContext) -> Iterator[tuple[cst.Call, cst.BaseExpression]]:
    """(call, saved object): `torch.save(obj, ...)` and calls of saving helpers."""
    project = project_of(ctx)
    local_savers = _local_savers(ctx)
    for call in ctx.calls:
        name = ctx.call_name(call)
        if name == "torch.save":
            obj = argument(call, 0, "obj")
            if obj is not None:
                yield call, obj
            continue
        func = call.func
        if type(func) is cst.Name and func.value in local_savers:
            index = local_savers[func.value]
            obj = argument(call, index, "")
            if obj is not None:
                yield call, obj
            continue
        if not call.args or call.args[0].keyword is not None:
            continue
        helper = project.helper_saves(ctx, call) if project is not None else None
        short = func.attr.value if type(func) is cst.Attribute else getattr(func, "value", "")
        if helper is not None or (name is not None and _SAVE_HELPER.match(str(short))):
            yield call, call.args[0].value


def _local_savers(ctx: FileContext) -> dict[str, int]:
    """Functions of this file that `torch.save` one of their parameters: name -> position."""
    savers: dict[str, int] = {}
    for save in ctx.calls_to("torch.save"):
        func = ctx.scope(save)
        if type(func) is not cst.FunctionDef:
            continue
        obj = argument(save, 0, "obj")
        params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
        if obj is not None and type(obj) is cst.Name and obj.value in params:
            savers[func.name.value] = params.index(obj.value)
    return savers

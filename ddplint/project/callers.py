"""Who runs a function where the other modules of its project call it: the calls of
`utils.get_fid` in `train.py` under `if args.rank == 0:`, and in `test.py`, a script of
one process. Asked lazily (`ddplint.domain.runners`, only when a finding depends on it):
each calling module is parsed once per project, and only when its summary calls the
function."""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from typing import Protocol, TypeVar

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.runner_kinds import Runner, Runners
from ddplint.domain.runners import runners
from ddplint.parsing import parse
from ddplint.project.module_index import ModuleIndex
from ddplint.project.summaries import CONSTRUCTION, MemberHead, ModuleSummary, object_method


class Project(Protocol):
    """What of `ddplint.project.Project` the look-up reads (it is passed in, not imported:
    the project module builds on this one)."""

    @property
    def summaries(self) -> ModuleIndex[ModuleSummary]: ...

    def callers_of(self, path: str) -> list[str]: ...

    def head(self, path: str) -> MemberHead | ModuleSummary: ...

    def function_at(self, importer: str, qualified: str) -> tuple[str, str] | None: ...

    def parse_of(self, path: str) -> FileContext | None: ...


class _Callers:
    """What one project has parsed and decided for `callers_run`."""

    def __init__(self) -> None:
        self.contexts: dict[str, FileContext | None] = {}
        self.deciding: set[tuple[str, str]] = set()


T = TypeVar("T")
Call = tuple[FileContext, cst.Call]  # a call and the parsed module it is in

_STATE: weakref.WeakKeyDictionary[Project, _Callers] = weakref.WeakKeyDictionary()


def callers_run(
    project: Project, ctx: FileContext, func: cst.FunctionDef, depth: int
) -> Runners | None:
    """The answers of `runners` at the calls of `func` in the other project modules that
    call it (`over_calls_elsewhere`); None when there are none."""

    def decide(calls: list[Call | None]) -> Runners | None:
        found: set[Runner] = set()
        for site in calls:
            found |= {Runner.UNKNOWN} if site is None else runners(site[0], site[1], depth)
        return frozenset(found) or None

    cyclic: Runners | None = frozenset({Runner.UNKNOWN})
    return over_calls_elsewhere(project, ctx, func, decide, cyclic)


def over_calls_elsewhere(
    project: Project,
    ctx: FileContext,
    func: cst.FunctionDef,
    decide: Callable[[list[Call | None]], T],
    cyclic: T,
) -> T:
    """`decide` over the calls of `func` in the other project modules that call it, each
    with its parsed module (None for a calling module that cannot be read): a module-level
    function by its name, a method of a module-level class on an object made by the class
    (`loss = BoxLoss(); loss(x)`), `__init__` by calling the class. `cyclic` while the
    same function is being decided already (a cycle of calls decides nothing)."""
    found_as = _looked_up_as(ctx, func)
    if found_as is None:
        return decide([])
    name, owner = found_as
    state = _STATE.setdefault(project, _Callers())
    key = (os.path.abspath(ctx.path), name)
    if key in state.deciding:
        return cyclic
    state.deciding.add(key)
    try:
        calls: list[Call | None] = []
        for caller, names in _calling(project, key[0], name, owner):
            other = _context(project, state, caller)
            if other is None:
                calls.append(None)
                continue
            calls.extend(
                (other, call)
                for call in other.calls
                if other.call_name(call) in names or object_method(other, call) in names
            )
        return decide(calls)
    finally:
        state.deciding.discard(key)


def _looked_up_as(ctx: FileContext, func: cst.FunctionDef) -> tuple[str, str] | None:
    """The name `Project.function_at` gives `func` in its module (its own, or its class's for
    what constructing it runs) and, for another method, its class; None for a function
    nested in another."""
    if ctx.parent(func) is ctx.module:
        return func.name.value, ""
    cls = ctx.model.enclosing_class(func)
    if cls is None or ctx.parent(func) is not cls.body or ctx.parent(cls) is not ctx.module:
        return None
    if func.name.value in CONSTRUCTION:
        return cls.name.value, ""
    return func.name.value, cls.name.value


def _calling(
    project: Project, path: str, name: str, owner: str
) -> list[tuple[str, frozenset[str]]]:
    """The modules that call `name` of the module at `path` (a method of the class
    `owner` when one is given), each with the qualified names its calls use for it."""
    wanted = (path, name)
    found = []
    for caller in project.callers_of(path):
        names = frozenset(
            qualified
            for qualified in project.head(caller).calls
            if (not owner or qualified.split(".")[-2:-1] == [owner])
            and path in project.summaries.lookup_ends(caller, qualified)
            and project.function_at(caller, qualified) == wanted
        )
        if names:
            found.append((caller, names))
    return found


def _context(project: Project, state: _Callers, path: str) -> FileContext | None:
    """The parsed module at `path`, checked in `project`: the run's own parse when it
    checks the module (`Project.parse_of`); None when it cannot be read."""
    if path not in state.contexts:
        kept = project.parse_of(path)
        if kept is not None:
            state.contexts[path] = kept.for_project(project)
            return state.contexts[path]
        try:
            with open(path, "rb") as handle:
                parsed = parse(path, handle.read())
        except OSError:
            parsed = None
        state.contexts[path] = (
            FileContext(path, parsed[0], parsed[1], project) if isinstance(parsed, tuple) else None
        )
    return state.contexts[path]

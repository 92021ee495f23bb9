"""One definition of "collective-issuing": a call of a torch.distributed collective every
rank of the group must issue (`SYNC_COLLECTIVES`), or a call that runs a function of this
file or of the project that issues one, directly or through further helpers.

Calls inside a lambda or a nested function do not make the enclosing function collective
(they run when that callable is called); `destroy_process_group` is not one (it is not
matched against the other ranks' calls).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

import libcst as cst

from ddplint.domain.apis import GROUP_KEYWORDS, SYNC_COLLECTIVES, WORLD_GROUPS
from ddplint.domain.ranks import Ranks
from ddplint.engine import Flow, Resolver
from ddplint.names import dotted

if TYPE_CHECKING:
    from ddplint.context import FileContext
    from ddplint.domain.project_view import ProjectView

_DEFERRING = frozenset({cst.Lambda, cst.ClassDef})
# Packages built on torch.distributed whose functions may issue collectives out of sight
# (Megatron's `save_checkpoint` brackets its writes with barriers).
_DISTRIBUTED_FRAMEWORKS = frozenset(
    {
        "megatron",
        "deepspeed",
        "fairscale",
        "apex",
        "colossalai",
        "horovod",
        "accelerate",
        "lightning",
        "pytorch_lightning",
        "mmengine",
        "mmcv",
        "detectron2",
        "fairseq",
        "torchrec",
    }
)


class Collectives:
    """Collective calls and collective-issuing functions of one file."""

    def __init__(
        self,
        resolver: Resolver,
        flow: Flow,
        ranks: Ranks,
        project: ProjectView | None,
        context: FileContext,
    ) -> None:
        """`context` is the file's `FileContext`, which project look-ups take."""
        self.resolver = resolver
        self.model = resolver.model
        self.flow = flow
        self.ranks = ranks
        self._project = project
        self._context = context
        self._issuing: dict[cst.FunctionDef, cst.Call] | None = None
        self._certain: set[cst.FunctionDef] | None = None

    def qualname(self, call: cst.Call) -> str | None:
        return self.model.imports.resolve(call.func)

    def is_collective(self, call: cst.Call) -> bool:
        """A direct call of a collective every rank must issue."""
        return self.qualname(call) in SYNC_COLLECTIVES

    def may_issue_out_of_sight(self, call: cst.Call) -> bool:
        """`call` runs a function of a distributed framework (`_DISTRIBUTED_FRAMEWORKS`)
        whose code is not in sight: whether it issues collectives is unknown."""
        name = self.qualname(call)
        return name is not None and name.split(".")[0] in _DISTRIBUTED_FRAMEWORKS

    def on_subgroup(self, call: cst.Call) -> bool:
        """The collective names a process group other than the default one."""
        return self.subgroup(call) is not None

    @staticmethod
    def subgroup(call: cst.Call) -> cst.BaseExpression | None:
        """The process group other than the default one that `call` names (`group=pg`)."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in GROUP_KEYWORDS:
                return None if (dotted(arg.value) or "") in WORLD_GROUPS else arg.value
        return None

    def _project_issues(self, call: cst.Call, surely: bool = False) -> bool:
        """A project helper that may issue a collective (with `surely`: on every call)."""
        project = self._project
        if project is None:
            return False
        ctx = self._context
        if surely:
            return project.helper_surely_issues_collective(ctx, call)
        return project.helper_issues_collective(ctx, call)

    @property
    def issuing(self) -> dict[cst.FunctionDef, cst.Call]:
        """Functions of this file that issue a collective, each with the call through which
        it does (the collective, or the helper call that leads to one). Computed once, by
        propagating from the direct issuers to their callers (linear in the calls)."""
        if self._issuing is None:
            self._issuing = self._propagate()
        return self._issuing

    def _propagate(self) -> dict[cst.FunctionDef, cst.Call]:
        model = self.model
        found: dict[cst.FunctionDef, cst.Call] = {}
        callers: dict[cst.FunctionDef, list[tuple[cst.FunctionDef, cst.Call]]] = {}
        queue: deque[cst.FunctionDef] = deque()
        for call in model.calls:
            frame = model.frame(call)
            if type(frame) is not cst.FunctionDef or self._deferred(call, frame):
                continue
            if frame not in found and (self.is_collective(call) or self._project_issues(call)):
                found[frame] = call
                queue.append(frame)
                continue
            if self.qualname(call) is None:
                for callee in self.resolver.callees(call):
                    callers.setdefault(callee, []).append((frame, call))
        while queue:
            callee = queue.popleft()
            for caller, call in callers.get(callee, []):
                if caller not in found:
                    found[caller] = call
                    queue.append(caller)
        return found

    @property
    def certain(self) -> set[cst.FunctionDef]:
        """Issuing functions that issue on every call: through a call that runs under no
        condition in its function but mode checks (`if dist.is_initialized():`,
        `if world_size > 1:`). A helper whose collective runs only under some other
        condition (`if use_fsdp_eval:`) may issue none when called."""
        if self._certain is None:
            certain: set[cst.FunctionDef] = set()
            calls = self._unconditional_calls()
            changed = True
            while changed:  # call chains of helpers are short: a few rounds
                changed = False
                for func, call in calls:
                    if func not in certain and (
                        self.is_collective(call)
                        or self._project_issues(call, surely=True)
                        or any(f in certain for f in self.resolver.callees(call))
                    ):
                        certain.add(func)
                        changed = True
            self._certain = certain
        return self._certain

    def _unconditional_calls(self) -> list[tuple[cst.FunctionDef, cst.Call]]:
        found = []
        issuing = self.issuing
        for func in issuing:
            for call in self.model.calls_by_frame(func):
                may_issue = (
                    self.is_collective(call)
                    or any(f in issuing for f in self.resolver.callees(call))
                    or self._project_issues(call)
                )
                if (
                    may_issue
                    and not self._deferred(call, func)
                    and all(self.ranks.is_mode_check(c.test) for c in self.flow.conditions(call))
                ):
                    found.append((func, call))
        return found

    def surely_issues(self, call: cst.Call) -> bool:
        """`call` issues a collective whenever it runs: a direct collective, a call of a
        function of this file or of the project that always issues one."""
        if self.is_collective(call):
            return True
        if self.qualname(call) is None and any(
            f in self.certain for f in self.resolver.callees(call)
        ):
            return True
        if self.qualname(call) is None and self.resolver.callees(call):
            return False
        return self._project_issues(call, surely=True)

    def _deferred(self, call: cst.Call, frame: cst.FunctionDef) -> bool:
        """The call sits in a lambda (or class body) inside `frame`: it runs later."""
        for ancestor in self.model.ancestors(call):
            if ancestor is frame:
                return False
            if type(ancestor) in _DEFERRING:  # exact types: no slow ABC `isinstance` misses
                return True
        return False

    def issues(self, call: cst.Call) -> bool:
        """`call` issues a collective: directly, through a function of this file, or
        through a project helper."""
        if self.is_collective(call):
            return True
        if self.qualname(call) is None and any(
            f in self.issuing for f in self.resolver.callees(call)
        ):
            return True
        return self._project_issues(call)

    def through(self, call: cst.Call) -> cst.Call | None:
        """For a call of an issuing function of this file, the call inside it that issues
        (for messages); None otherwise."""
        for func in self.resolver.callees(call):
            inner = self.issuing.get(func)
            if inner is not None:
                return inner
        return None

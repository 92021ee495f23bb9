"""Decorators that run the function they decorate on the main process only: known by
name (`@rank_zero_only` from Lightning, `@master_only`), or read from their definition,
in this file or in another project module, when their wrapper calls the wrapped function
only under a rank gate (returning something else, or nothing, on the other ranks):

    def main_process(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            if get_rank() == 0:
                return func(*args, **kwargs)

        return wrapper
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from ddplint.domain.apis import MAIN_ONLY_DECORATOR
from ddplint.domain.ranks import last_name
from ddplint.engine import Resolver


class RankDecorators:
    """The main-only decorators of one file's functions."""

    def __init__(
        self,
        resolver: Resolver,
        on_main_only: Callable[[cst.CSTNode], bool],
        elsewhere: Callable[[cst.BaseExpression], bool] | None = None,
    ) -> None:
        """`on_main_only` says whether a rank test of a node's function lets it run on the
        main process only; `elsewhere`, whether a decorator expression names a main-only
        decorator of another project module (`Project.main_only_decorator`)."""
        self.model = resolver.model
        self._on_main_only = on_main_only
        self._elsewhere = elsewhere
        self._read: dict[cst.FunctionDef, bool] = {}

    def of(self, func: cst.FunctionDef) -> cst.Decorator | None:
        """The decorator that makes `func` run on the main process only, else None."""
        for decorator in func.decorators:
            if self._main_only(decorator.decorator):
                return decorator
        return None

    def defined(self) -> Iterator[str]:
        """Names of the module-level functions of this file that are main-only decorators
        by their definition (what importers learn from the module's summary)."""
        for name in self.model.functions:
            if self._local(name):
                yield name

    def _main_only(self, expr: cst.BaseExpression) -> bool:
        name = last_name(expr.func if type(expr) is cst.Call else expr)
        if name is not None and MAIN_ONLY_DECORATOR.match(name):
            return True
        if type(expr) is cst.Name and self._local(expr.value):
            return True
        if isinstance(expr, (cst.Name, cst.Attribute)) and self._elsewhere is not None:
            return self._elsewhere(expr)
        return False

    def _local(self, name: str) -> bool:
        """Every module-level definition of `name` is a main-only decorator."""
        module = self.model.module
        defs = [d for d in self.model.functions.get(name, []) if self.model.frame(d) is module]
        return bool(defs) and all(self.wraps_main_only(d) for d in defs)

    def wraps_main_only(self, decorator: cst.FunctionDef) -> bool:
        """`decorator` returns a wrapper defined in it, and every use of the function it
        is given (its first parameter) is a call in that wrapper under a gate that holds
        on the main process only."""
        known = self._read.get(decorator)
        if known is not None:
            return known
        self._read[decorator] = False  # a wrapper decorated with itself proves nothing
        found = self._read[decorator] = self._wraps_main_only(decorator)
        return found

    def _wraps_main_only(self, decorator: cst.FunctionDef) -> bool:
        params = [*decorator.params.posonly_params, *decorator.params.params]
        if not params:
            return False
        wrappers = self._returned_wrappers(decorator)
        if not wrappers:
            return False
        wrapped = params[0].name.value
        uses = [n for n in self.model.walk(decorator.body) if self._reads(n, wrapped)]
        return bool(uses) and all(self._gated_call(use, wrappers) for use in uses)

    def _returned_wrappers(self, decorator: cst.FunctionDef) -> list[cst.FunctionDef]:
        """The functions defined in `decorator`'s body that it returns; [] when it may
        return anything else."""
        inner = {s.name.value: s for s in decorator.body.body if type(s) is cst.FunctionDef}
        returns = self.model.returns.get(decorator, [])
        names = [r.value.value if type(r.value) is cst.Name else None for r in returns]
        if not names or any(n not in inner for n in names):
            return []
        return [inner[n] for n in names if n is not None]

    def _reads(self, node: cst.CSTNode, name: str) -> bool:
        """`node` reads the variable `name` (not an attribute or keyword of that name,
        and not in a decorator such as `@functools.wraps(func)`)."""
        if not (type(node) is cst.Name and node.value == name):
            return False
        parent = self.model.parents.get(node)
        if type(parent) is cst.Attribute and parent.attr is node:
            return False
        if type(parent) is cst.Arg and parent.keyword is node:
            return False
        return not any(type(a) is cst.Decorator for a in self.model.ancestors(node))

    def _gated_call(self, use: cst.CSTNode, wrappers: list[cst.FunctionDef]) -> bool:
        call = self.model.parents.get(use)
        return (
            type(call) is cst.Call
            and call.func is use
            and any(self.model.frame(call) is w for w in wrappers)
            and self._on_main_only(call)
        )

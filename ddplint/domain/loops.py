"""One definition of training versus evaluation code: a training loop is a loop whose
body reaches `backward()` (directly or through a function of this file it calls);
evaluation code runs under `torch.no_grad()` / `torch.inference_mode()` (a `with` block
or a decorator) or after `model.eval()` in its function; a file trains when it calls
`backward()` or builds an optimizer."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ddplint.domain.apis import (
    NO_GRAD,
    OPTIMIZER_HELPER,
    OPTIMIZER_MODULE,
    THIRD_PARTY_OPTIMIZERS,
)
from ddplint.domain.backward import Backward
from ddplint.engine import Resolver
from ddplint.names import dotted

Loop = cst.For | cst.While


class Loops:
    """Training loops and evaluation code of one file."""

    def __init__(self, resolver: Resolver, backward: Backward) -> None:
        self.resolver = resolver
        self.model = resolver.model
        self.backward = backward
        self._training: set[cst.FunctionDef] | None = None

    def _training_functions(self) -> set[cst.FunctionDef]:
        """Functions that run `backward()`, directly or through functions they call."""
        if self._training is None:
            found: set[cst.FunctionDef] = set()
            for site in self.backward.sites:
                frame = self.model.frame(site.call)
                if isinstance(frame, cst.FunctionDef):
                    found.add(frame)
            changed = True
            while changed:  # a few rounds: call chains of training helpers are short
                changed = False
                for call in self.model.calls:
                    frame = self.model.frame(call)
                    if (
                        isinstance(frame, cst.FunctionDef)
                        and frame not in found
                        and any(f in found for f in self.resolver.callees(call))
                    ):
                        found.add(frame)
                        changed = True
            self._training = found
        return self._training

    def is_training_loop(self, loop: Loop) -> bool:
        """The loop body reaches `backward()`."""
        model = self.model
        if any(model.is_inside(s.call, loop.body) for s in self.backward.sites):
            return True
        training = self._training_functions()
        start, end = model.order[loop.body], model.subtree_end[loop.body]
        return any(
            start <= model.order[call] < end
            and any(f in training for f in self.resolver.callees(call))
            for call in model.calls
        )

    def is_optimizer_class(self, call: cst.Call) -> bool:
        """`call` constructs an optimizer class (`torch.optim.AdamW(...)`, apex, bnb)."""
        name = self.model.imports.resolve(call.func)
        if name is None:
            return False
        if name.startswith(OPTIMIZER_MODULE):
            kind = name.rpartition(".")[2]
            return kind[:1].isupper() and "lr_scheduler" not in name and "swa_utils" not in name
        return name.startswith(THIRD_PARTY_OPTIMIZERS)

    def builds_optimizer(self, call: cst.Call) -> bool:
        """`call` constructs an optimizer, or calls a helper whose name says it builds
        one (`create_optimizer(args, model)`)."""
        if self.is_optimizer_class(call):
            return True
        name = dotted(call.func)
        return name is not None and bool(OPTIMIZER_HELPER.search(name.rpartition(".")[2]))

    @property
    def trains(self) -> bool:
        """The file calls `backward()` or builds an optimizer: it takes part in training
        (a script whose loop lives in another module still builds its optimizer)."""
        return bool(self.backward.sites) or any(self.builds_optimizer(c) for c in self.model.calls)

    def trains_in_eval_mode(
        self, is_model: Callable[[cst.BaseExpression, cst.CSTNode], bool]
    ) -> bool:
        """The model trains in eval mode (a linear probe on a frozen backbone: BatchNorm uses
        its running statistics): a function that runs `backward()` calls `model.eval()`,
        and no code calls `model.train()`, `model` being any receiver `is_model` accepts."""
        training = {self.model.frame(s.call) for s in self.backward.sites}
        evaluated = False
        for method in ("eval", "train"):
            for call in self.model.calls_by_name.get(method, []):
                func = call.func
                if not isinstance(func, cst.Attribute) or not is_model(func.value, call):
                    continue
                if method == "train":
                    return False
                evaluated = evaluated or self.model.frame(call) in training
        return evaluated

    def is_evaluation(self, node: cst.CSTNode) -> bool:
        """`node` runs with gradients off: inside `with torch.no_grad():` (or
        `inference_mode()`) in its function, or in a function decorated with one."""
        model = self.model
        for ancestor in model.ancestors(node):
            if isinstance(ancestor, cst.With):
                for item in ancestor.items:
                    inner = item.item
                    if isinstance(inner, cst.Call) and self._no_grad(inner.func):
                        return True
            if isinstance(ancestor, cst.FunctionDef):
                return any(
                    self._no_grad(
                        d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                    )
                    for d in ancestor.decorators
                )
            if isinstance(ancestor, cst.Lambda):
                return False
        return False

    def _no_grad(self, func: cst.BaseExpression) -> bool:
        name = self.model.imports.resolve(func)
        return name in NO_GRAD and name != "torch.enable_grad"

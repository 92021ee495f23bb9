"""One definition of training versus evaluation code: a training loop is a loop whose
body reaches `backward()` (directly or through a function of this file it calls);
evaluation code runs under `torch.no_grad()` / `torch.inference_mode()` (a `with` block
or a decorator) or after `model.eval()` in a function that does not train; a file trains
when it calls `backward()` or builds an optimizer; a data loader (or its sampler) serves
evaluation when the names around it, its building function, its dataset's origin, an
in-order sampler or the code that reads it say so (`serves_evaluation`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import libcst as cst

from ddplint.domain.apis import (
    NO_GRAD,
    OPTIMIZER_HELPER,
    OPTIMIZER_MODULE,
    THIRD_PARTY_OPTIMIZERS,
)
from ddplint.domain.backward import Backward
from ddplint.engine import Resolver
from ddplint.engine.resolve import argument
from ddplint.names import dotted

Loop = cst.For | cst.While

_EVALUATION_WORDS = frozenset(
    {
        "val",
        "valid",
        "validation",
        "test",
        "testing",
        "eval",
        "evaluation",
        "evaluate",
        "dev",
        "holdout",
        "calib",
        "calibration",
        "infer",
        "inference",
        "predict",
        "score",
    }
)
_WORD = re.compile(r"[A-Za-z][a-z]*|[0-9]+")
_DATA_SUFFIXES = ("dataloader", "loader", "sampler", "dataset", "data", "set", "ds", "dl")
_SEQUENTIAL_SAMPLER = "torch.utils.data.SequentialSampler"


def words(name: str) -> set[str]:
    """The lower-case words of the last part of a dotted name, a data suffix split off a
    word (`self.valLoader`: {"val", "loader"}; `testloader`: {"testloader", "test"})."""
    found = {w.lower() for w in _WORD.findall(name.rpartition(".")[2])}
    for word in list(found):
        for suffix in _DATA_SUFFIXES:
            if word.endswith(suffix) and len(word) > len(suffix):
                found.add(word[: -len(suffix)])
                break
    return found


def named_for(names: Iterable[str]) -> str | None:
    """What the names say a loader is for: "training" when one says train (it wins),
    "evaluation" when one says val/test/eval/..., else None."""
    found = [words(name) for name in names]
    if any("train" in w or "training" in w for w in found):
        return "training"
    if any(w & _EVALUATION_WORDS for w in found):
        return "evaluation"
    return None


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
                if type(frame) is cst.FunctionDef:
                    found.add(frame)
            changed = True
            while changed:  # a few rounds: call chains of training helpers are short
                changed = False
                for call in self.model.calls:
                    frame = self.model.frame(call)
                    if (
                        type(frame) is cst.FunctionDef
                        and frame not in found
                        and any(f in found for f in self.resolver.callees(call))
                    ):
                        found.add(frame)
                        changed = True
            self._training = found
        return self._training

    def runs_backward(self, func: cst.FunctionDef) -> bool:
        """`func` runs `backward()`, directly or through functions of this file it calls."""
        return func in self._training_functions()

    def is_training_loop(self, loop: Loop) -> bool:
        """The loop body reaches `backward()`."""
        calls = self.model.within(loop.body, self.model.calls)
        if any(self.backward.site_of(call) is not None for call in calls):
            return True
        return any(self.runs_training_function(call) for call in calls)

    def reaches_backward(self, call: cst.Call) -> bool:
        """`call` is a `backward()`, or runs a function of this file that runs one."""
        return self.backward.site_of(call) is not None or self.runs_training_function(call)

    def runs_training_function(self, call: cst.Call) -> bool:
        """`call` runs a function of this file that runs `backward()`."""
        training = self._training_functions()
        return any(f in training for f in self.resolver.callees(call))

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
                if type(func) is not cst.Attribute or not is_model(func.value, call):
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
            if self._turns_gradients_off(ancestor):
                return True
            if type(ancestor) is cst.FunctionDef:
                return any(
                    self._no_grad(
                        d.decorator.func if type(d.decorator) is cst.Call else d.decorator
                    )
                    for d in ancestor.decorators
                )
            if type(ancestor) is cst.Lambda:
                return False
        return False

    def turns_gradients_off_inside(self, loop: cst.For | cst.While) -> bool:
        """The body of `loop` runs its work under `with torch.no_grad():` (or
        `inference_mode()`) of its own: `for batch in val_loader: with torch.no_grad():`."""
        return any(self._turns_gradients_off(node) for node in self.model.walk(loop.body))

    def _turns_gradients_off(self, node: cst.CSTNode) -> bool:
        """`node` is a `with torch.no_grad():` / `inference_mode()` block."""
        return type(node) is cst.With and any(
            type(item.item) is cst.Call and self._no_grad(item.item.func) for item in node.items
        )

    def in_eval_mode(self, node: cst.CSTNode) -> bool:
        """`node` follows a `X.eval()` call in a function that does not train, with no
        `X.train()` call in between."""
        frame = self.model.frame(node)
        if type(frame) is not cst.FunctionDef or frame in self._training_functions():
            return False
        return self.after_eval_switch(node)

    def after_eval_switch(self, node: cst.CSTNode) -> bool:
        """`node` follows, in its function, a `X.eval()` call with no `X.train()` call in
        between, whether or not the function also trains elsewhere."""
        model = self.model
        frame = model.frame(node)
        switched = False
        for call in model.calls_by_frame(frame):
            if model.order[call] >= model.order[node]:
                break
            func = call.func
            if type(func) is cst.Attribute and func.attr.value in ("eval", "train"):
                switched = func.attr.value == "eval" and not call.args
        return switched

    def serves_evaluation(
        self,
        built: cst.Call,
        names: Sequence[str],
        dataset: cst.BaseExpression | None,
        loaders: Sequence[cst.Call],
    ) -> bool:
        """The data loader (or sampler) built by `built` serves evaluation, not training:
        it is built under `no_grad`, or `names` (its own, its dataset's, its loaders')
        say so ("train" wins), or the function building it is named for evaluation, or
        its dataset is computed from one named so (`Subset(test_set, ...)`), or one of
        `loaders` reads its samples in order (`SequentialSampler`), or the code reading
        the loaders runs evaluation and no training step."""
        if self.is_evaluation(built) or self._in_evaluation_branch(built):
            return True
        named = named_for(names)
        if named is not None:
            return named == "evaluation"
        frame = self.model.frame(built)
        if type(frame) is cst.FunctionDef:
            named = named_for([frame.name.value])
            if named is not None:
                return named == "evaluation"
        if dataset is not None and self._named_origin(dataset, built) == "evaluation":
            return True
        if any(self._in_order(loader) for loader in loaders):
            return True
        return self._read_for_evaluation(loaders)

    def _in_evaluation_branch(self, node: cst.CSTNode) -> bool:
        """`node` lies in its function's branch for evaluation: the `else` of a test named
        for training (`if is_train: ... else:`), the body of its negation (`if not
        training:`), or the body of a test named for evaluation (`if is_test:`)."""
        child = node
        for ancestor in self.model.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if type(ancestor) is cst.If:
                test = ancestor.test
                negated = False
                if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
                    test, negated = test.expression, True
                named = None
                if isinstance(test, (cst.Name, cst.Attribute)):
                    named = named_for([dotted(test) or ""])
                in_body = child is ancestor.body
                if named == "training" and in_body == negated:
                    return True
                if named == "evaluation" and in_body != negated:
                    return True
            child = ancestor
        return False

    def _named_origin(self, dataset: cst.BaseExpression, at: cst.CSTNode) -> str | None:
        names = [
            name
            for value in self.resolver.sources(dataset, at, depth=2)
            if isinstance(value.expr, (cst.Name, cst.Attribute))
            and (name := dotted(value.expr)) is not None
        ]
        return named_for(names)

    def _in_order(self, loader: cst.Call) -> bool:
        """Every sampler the loader may be given is a `SequentialSampler` (or None)."""
        sampler = argument(loader, 3, "sampler")
        if sampler is None:
            return False
        leaves = [v.expr for v in self.resolver.values(sampler, loader) if v.leaf]
        ordered = False
        for value in leaves:
            if type(value) is cst.Name and value.value == "None":
                continue
            if not (
                type(value) is cst.Call
                and self.model.imports.resolve(value.func) == _SEQUENTIAL_SAMPLER
            ):
                return False
            ordered = True
        return ordered

    def feeds_training(self, loaders: Sequence[cst.Call]) -> bool:
        """A read of a name one of `loaders` is bound to is iterated by a training loop
        or passed to a function of this file that trains."""
        return any(self._trains_on(read) for read in self._reads(loaders))

    def _read_for_evaluation(self, loaders: Sequence[cst.Call]) -> bool:
        """Some read of a name the loaders are bound to (or of a local name it is copied
        into) is evaluation code, and none is iterated by a training loop or passed to a
        function of this file that trains."""
        evaluated = False
        for read in self._reads(loaders):
            if self._trains_on(read):
                return False
            evaluated = evaluated or self.is_evaluation(read) or self.in_eval_mode(read)
        return evaluated

    def _reads(self, loaders: Sequence[cst.Call]) -> list[cst.CSTNode]:
        model = self.model
        keys: list[tuple[str, cst.CSTNode]] = []
        for loader in loaders:
            target = _assigned_to(model.parents.get(loader))
            if target is not None:
                keys.append((target, model.frame(loader)))
        reads: list[cst.CSTNode] = []
        for _ in range(2):  # the loader's names, then local names it is copied into
            found = [n for key, frame in keys for n in self._reads_of(key, frame)]
            reads.extend(found)
            keys = [
                (target, model.frame(n))
                for n in found
                if (target := _assigned_to(model.parents.get(n))) is not None
            ]
        return reads

    def _reads_of(self, key: str, frame: cst.CSTNode) -> list[cst.Name | cst.Attribute]:
        """Reads of the dotted name `key`: in `frame` for a plain name, anywhere for an
        attribute (`self.val_loader`)."""
        model = self.model
        kind = cst.Attribute if "." in key else cst.Name
        found = []
        for node in model.by_type.get(kind, []):
            if not isinstance(node, (cst.Name, cst.Attribute)) or dotted(node) != key:
                continue
            if kind is cst.Name and model.frame(node) is not frame:
                continue
            parent = model.parents.get(node)
            if type(parent) is cst.Attribute and parent.value is node:
                continue  # `loader.sampler`: a read of something else
            if type(parent) is cst.AssignTarget:
                continue
            found.append(node)
        return found

    def _trains_on(self, read: cst.CSTNode) -> bool:
        """The read is the iterable of a training loop, or an argument of a call that
        runs a training function of this file."""
        model = self.model
        for ancestor in model.ancestors(read):
            if type(ancestor) is cst.Call:
                training = self._training_functions()
                if any(f in training for f in self.resolver.callees(ancestor)):
                    return True
            elif type(ancestor) is cst.For and model.is_inside(read, ancestor.iter):
                return self.is_training_loop(ancestor)
            elif isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return False
        return False

    def _no_grad(self, func: cst.BaseExpression) -> bool:
        name = self.model.imports.resolve(func)
        return name in NO_GRAD and name != "torch.enable_grad"


def _assigned_to(parent: cst.CSTNode | None) -> str | None:
    """The dotted name a single-target `x = <value>` binds."""
    if type(parent) is cst.Assign and len(parent.targets) == 1:
        return dotted(parent.targets[0].target)
    return None

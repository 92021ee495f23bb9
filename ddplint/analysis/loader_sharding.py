"""Whether a DataLoader's data is split between ranks: samplers that shard nothing
(`RandomSampler`, ...), datasets split by other means (rank or world size read, a shard
helper, a dataset class that reads the rank, random tensors), and loaders meant for
evaluation rather than training."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.analysis.paths import path_values
from ddplint.context import FileContext
from ddplint.facts import argument
from ddplint.names import dotted

_PLAIN_SAMPLERS = frozenset(
    f"torch.utils.data.{name}"
    for name in (
        "RandomSampler",
        "SequentialSampler",
        "WeightedRandomSampler",
        "SubsetRandomSampler",
    )
)
_EVAL_NAME = re.compile(
    r"(^|_)(val|valid|validation|test|testing|eval|evaluation|dev|holdout|calib|calibration|infer|inference|predict|score)",
    re.IGNORECASE,
)
_SHARD_NAME = re.compile(r"split_by_node|split_dataset_by_node|nodesplitter|shard", re.IGNORECASE)
_SYNTHETIC = frozenset({"torch.randn", "torch.rand", "torch.randint", "torch.randperm"})
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode"})


def plain_sampler(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 2
) -> bool:
    """Every value the sampler may take is a non-distributed torch sampler (or None)."""
    values = [v for v, _ in path_values(ctx, expr, at)]
    concrete = [v for v in values if dotted(v) is None or isinstance(v, cst.Call)]
    if not concrete:
        return False
    for value in concrete:
        if isinstance(value, cst.Name) and value.value == "None":
            continue
        if isinstance(value, cst.Call) and ctx.call_name(value) == "torch.utils.data.BatchSampler":
            # `BatchSampler(RandomSampler(ds), bs, drop_last=True)`: as sharded as its sampler
            inner = argument(value, 0, "sampler")
            if inner is not None and depth > 0 and plain_sampler(ctx, inner, value, depth - 1):
                continue
            return False
        if not (isinstance(value, cst.Call) and ctx.call_name(value) in _PLAIN_SAMPLERS):
            return False
    return True


class Sharding:
    """Whether a dataset expression is split between ranks by some other means."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.classes = {
            node.name.value: node
            for node in ctx.nodes_of(cst.ClassDef)
            if isinstance(node, cst.ClassDef)
        }

    def sharded(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 2) -> bool:
        """Some value of the dataset `expr` reads the rank or world size, calls a shard
        helper or a dataset class that reads the rank, or is random tensors."""
        ctx = self.ctx
        facts = ctx.facts
        for value, where in path_values(ctx, expr, at):
            for node in ctx.walk(value):
                if isinstance(node, (cst.Name, cst.Attribute, cst.Call)) and (
                    facts.is_rank_value(node) or facts.is_world_size(node)
                ):
                    return True
                if isinstance(node, (cst.Name, cst.Attribute)):
                    name = dotted(node) or ""
                    if _SHARD_NAME.search(name):
                        return True
                if isinstance(node, cst.Call):
                    callee = ctx.call_name(node)
                    if callee in _SYNTHETIC:
                        return True  # random tensors: there is no dataset to duplicate
                    cls = self.classes.get(dotted(node.func) or "")
                    if cls is not None and self._class_reads_rank(cls):
                        return True
                if (
                    depth > 0
                    and isinstance(node, cst.Name)
                    and node is not value
                    and not isinstance(ctx.parent(node), cst.Attribute)
                    and self.sharded(node, where, depth - 1)
                ):
                    return True
        return False

    def _class_reads_rank(self, cls: cst.ClassDef) -> bool:
        ctx = self.ctx
        for node in ctx.walk(cls):
            if isinstance(node, (cst.Name, cst.Attribute, cst.Call)) and (
                ctx.facts.is_rank_value(node) or ctx.facts.is_world_size(node)
            ):
                return True
        return False


def _target_names(ctx: FileContext, call: cst.Call) -> list[str]:
    """Names the loader is assigned to (`train_loader = DataLoader(...)`)."""
    parent = ctx.parent(call)
    names: list[str] = []
    if isinstance(parent, cst.Assign):
        for target in parent.targets:
            names.extend(n for n in (dotted(target.target),) if n)
    elif isinstance(parent, (cst.AnnAssign,)):
        name = dotted(parent.target)
        if name:
            names.append(name)
    return names


def evaluation_loader(ctx: FileContext, call: cst.Call, dataset: cst.BaseExpression | None) -> bool:
    """The loader is for evaluation: its name, its dataset's or its function's says so
    (`val_loader`, `evaluate()`), or it is built under `no_grad` / `inference_mode`."""
    names = _target_names(ctx, call)
    if dataset is not None:
        names.append(ctx.code(dataset))
    if any(_EVAL_NAME.search(n.rpartition(".")[2]) for n in names):
        return True
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                inner = item.item.func if isinstance(item.item, cst.Call) else item.item
                if ctx.qualname(inner) in _NO_GRAD:
                    return True
        if isinstance(ancestor, cst.FunctionDef):
            if _EVAL_NAME.search(ancestor.name.value):
                return True
            for decorator in ancestor.decorators:
                inner = decorator.decorator
                inner = inner.func if isinstance(inner, cst.Call) else inner
                if ctx.qualname(inner) in _NO_GRAD:
                    return True
    return False


def trained_on(ctx: FileContext, call: cst.Call) -> bool:
    """A `for` loop over the loader calls `backward()`."""
    names = set(_target_names(ctx, call))
    if not names:
        return False
    for node in ctx.nodes_of(cst.For):
        if isinstance(node, cst.For) and names & set(ctx.names_in(node.iter)):
            for inner in ctx.walk(node.body):
                if (
                    isinstance(inner, cst.Call)
                    and isinstance(inner.func, cst.Attribute)
                    and inner.func.attr.value == "backward"
                ):
                    return True
    return False

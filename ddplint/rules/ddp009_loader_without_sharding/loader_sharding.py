"""Whether a DataLoader's data is split between ranks: samplers that shard nothing
(`RandomSampler`, ...) and datasets split by other means (rank or world size read, a shard
helper, a dataset class that reads the rank, random tensors). Whether a loader trains is
`ddplint.domain.loops`' question."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import argument, facts_of, is_false
from ddplint.domain.paths import path_values
from ddplint.domain.synthetic_data import RANDOM_TENSORS
from ddplint.names import dotted

# Samplers that walk the whole dataset (or a fixed subset of it) on every rank. Not
# `WeightedRandomSampler`, nor `RandomSampler(replacement=True)`: they draw `num_samples`
# indices with replacement from this rank's generator, which splits nothing but walks no
# whole dataset either; whether the ranks draw alike is a question of their seeds (DDP035).
_PLAIN_SAMPLERS = frozenset(
    f"torch.utils.data.{name}"
    for name in ("RandomSampler", "SequentialSampler", "SubsetRandomSampler")
)
_SHARD_NAME = re.compile(r"split_by_node|split_dataset_by_node|nodesplitter|shard", re.IGNORECASE)


def plain_sampler(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 2
) -> bool:
    """Every value the sampler may take is a non-distributed torch sampler (or None)."""
    values = [v for v, _ in path_values(ctx, expr, at)]
    concrete = [v for v in values if dotted(v) is None or type(v) is cst.Call]
    if not concrete:
        return False
    for value in concrete:
        if type(value) is cst.Name and value.value == "None":
            continue
        if type(value) is cst.Call and ctx.call_name(value) == "torch.utils.data.BatchSampler":
            # `BatchSampler(RandomSampler(ds), bs, drop_last=True)`: as sharded as its sampler
            inner = argument(value, 0, "sampler")
            if inner is not None and depth > 0 and plain_sampler(ctx, inner, value, depth - 1):
                continue
            return False
        if not (type(value) is cst.Call and ctx.call_name(value) in _PLAIN_SAMPLERS):
            return False
        replacement = argument(value, 1, "replacement")
        if ctx.call_name(value) == "torch.utils.data.RandomSampler" and not (
            replacement is None or is_false(replacement)
        ):
            return False  # draws with replacement (or may): see `_PLAIN_SAMPLERS`
    return True


class Sharding:
    """Whether a dataset expression is split between ranks by some other means."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.classes = {
            node.name.value: node
            for node in ctx.nodes_of(cst.ClassDef)
            if type(node) is cst.ClassDef
        }

    def sharded(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 2) -> bool:
        """Some value of the dataset `expr` reads the rank or world size, calls a shard
        helper or a dataset class that reads the rank, or is random tensors."""
        ctx = self.ctx
        facts = facts_of(ctx)
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
                if type(node) is cst.Call:
                    callee = ctx.call_name(node)
                    if callee in RANDOM_TENSORS:
                        return True  # random tensors: there is no dataset to duplicate
                    cls = self.classes.get(dotted(node.func) or "")
                    if cls is not None and self._class_reads_rank(cls):
                        return True
                if (
                    depth > 0
                    and type(node) is cst.Name
                    and node is not value
                    and type(ctx.parent(node)) is not cst.Attribute
                    and self.sharded(node, where, depth - 1)
                ):
                    return True
        return False

    def _class_reads_rank(self, cls: cst.ClassDef) -> bool:
        ctx = self.ctx
        for node in ctx.walk(cls):
            if isinstance(node, (cst.Name, cst.Attribute, cst.Call)) and (
                facts_of(ctx).is_rank_value(node) or facts_of(ctx).is_world_size(node)
            ):
                return True
        return False


def serves_evaluation(ctx: FileContext, call: cst.Call, dataset: cst.BaseExpression | None) -> bool:
    """The loader `call` is for evaluation (`Loops.serves_evaluation`, from the names it is
    assigned to and its dataset's)."""
    names = [n for n in (dotted(dataset),) if n is not None] if dataset is not None else []
    parent = ctx.parent(call)
    if type(parent) is cst.Assign:
        names.extend(n for t in parent.targets if (n := dotted(t.target)) is not None)
    elif type(parent) is cst.AnnAssign:
        names.extend(n for n in (dotted(parent.target),) if n is not None)
    return domain_of(ctx).loops.serves_evaluation(call, names, dataset, [call])

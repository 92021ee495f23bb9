"""Hugging Face `datasets` objects shuffled without a seed in every process: `Dataset.shuffle`
then takes its seed from NumPy's global generator, which starts from fresh OS entropy in
each process unless the script seeds it; the processes hold the rows in different orders,
and a sampler that gives each process its share of the indices hands out overlapping rows."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.random_draws import LIBRARY_SEEDS, is_seeding_name
from ddplint.domain.ranks import last_name
from ddplint.domain.runners import every_rank
from ddplint.domain.samplers import sampler_calls
from ddplint.engine.resolve import argument

# Calls that make a map-style `datasets` object (a `Dataset` or a `DatasetDict`).
_DATASET_ROOTS = frozenset(
    {
        "datasets.load_dataset",
        "datasets.load_from_disk",
        "datasets.concatenate_datasets",
        "datasets.Dataset.from_dict",
        "datasets.Dataset.from_list",
        "datasets.Dataset.from_pandas",
        "datasets.Dataset.from_json",
        "datasets.Dataset.from_csv",
        "datasets.Dataset.from_parquet",
        "datasets.Dataset.from_text",
        "datasets.Dataset.from_generator",
        "datasets.Dataset.load_from_disk",
    }
)
# Methods of a `Dataset` / `DatasetDict` that return one of the same kind.
_DATASET_METHODS = frozenset(
    {
        "map",
        "filter",
        "select",
        "shuffle",
        "sort",
        "train_test_split",
        "rename_column",
        "rename_columns",
        "remove_columns",
        "select_columns",
        "cast",
        "cast_column",
        "flatten",
        "with_format",
        "set_format",
        "shard",
    }
)
# `Trainer` classes of transformers and TRL: under a multi-process launch each process
# loads its own share of the dataset's indices.
_TRAINER_MODULES = ("transformers.", "trl.")
_MAX_STEPS = 12
# Calls that seed NumPy's global generator (the library helpers seed it as well).
_NUMPY_SEEDS = frozenset({"numpy.random.seed", *LIBRARY_SEEDS})


def unseeded_shuffles(ctx: FileContext) -> list[cst.Call]:
    """`.shuffle()` calls without a seed or generator on a map-style `datasets` object, run
    by every process of a job that shards the rows by index (a DistributedSampler or a
    transformers / TRL `Trainer` in the file), in a file that seeds no generator (no
    `np.random.seed`, library `set_seed`, or helper named for seeding) and builds no
    `Trainer` before it (its constructor seeds NumPy): `Dataset.shuffle` then seeds its
    permutation from NumPy's global generator, which each process started from fresh OS
    entropy."""
    if not _shards_by_index(ctx) or _seeds_numpy(ctx):
        return []
    found = []
    for call in ctx.model.calls_by_name.get("shuffle", ()):
        func = call.func
        if type(func) is not cst.Attribute or call.args:
            continue  # a seed, a generator or a buffer size given (or a plain function)
        if not _is_dataset(ctx, func.value, call, _MAX_STEPS):
            continue
        if every_rank(ctx, call) is not True:
            continue  # one process shuffles: nothing to disagree with
        if any(ctx.before(t, call) for t in _trainers(ctx)):
            continue  # the Trainer seeded NumPy alike on every process
        found.append(call)
    return found


def _seeds_numpy(ctx: FileContext) -> bool:
    """The file may seed NumPy's global generator somewhere: directly, through a library
    helper, or through a function named for seeding (its body may be out of sight)."""
    return any(
        ctx.call_name(call) in _NUMPY_SEEDS or is_seeding_name(last_name(call.func) or "")
        for call in ctx.calls
    )


def _trainers(ctx: FileContext) -> list[cst.Call]:
    found = []
    for call in ctx.calls:
        name = ctx.call_name(call) or ""
        if name.startswith(_TRAINER_MODULES) and name.endswith("Trainer"):
            found.append(call)
    return found


def _shards_by_index(ctx: FileContext) -> bool:
    return bool(sampler_calls(ctx) or _trainers(ctx))


def _is_dataset(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, steps: int) -> bool:
    """`expr` is proven a map-style `datasets` object on every path: made by a loader of
    `datasets` (not `streaming=True`), through its methods and subscripts."""
    if steps <= 0:
        return False
    if type(expr) is cst.Subscript:
        return _is_dataset(ctx, expr.value, at, steps - 1)
    if type(expr) is cst.Call:
        name = ctx.call_name(expr)
        if name in _DATASET_ROOTS:
            streaming = argument(expr, None, "streaming")
            return streaming is None or (type(streaming) is cst.Name and streaming.value == "False")
        func = expr.func
        return (
            type(func) is cst.Attribute
            and func.attr.value in _DATASET_METHODS
            and _is_dataset(ctx, func.value, expr, steps - 1)
        )
    if type(expr) is cst.Name:
        leaves = [v for v in ctx.resolver.values(expr, at) if v.leaf]
        return bool(leaves) and all(
            v.expr is not expr and _is_dataset(ctx, v.expr, v.at, steps - 1) for v in leaves
        )
    return False

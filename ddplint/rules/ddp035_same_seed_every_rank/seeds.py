"""Where a script seeds torch's generator: `torch.manual_seed`, library helpers known to
call it (`transformers.set_seed`, Lightning's `seed_everything`), and helpers of other
modules whose name says they seed (`utils.fix_random_seeds(args.seed)`): those are a
guess, resting on a name."""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.engine.resolve import argument

TORCH_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed"})
# Library helpers that seed torch with the value given, the same on every process.
_LIBRARY_SEEDS = frozenset(
    {
        "transformers.set_seed",
        "transformers.trainer_utils.set_seed",
        "accelerate.utils.set_seed",
        "lightning.seed_everything",
        "lightning.fabric.seed_everything",
        "lightning.pytorch.seed_everything",
        "pytorch_lightning.seed_everything",
    }
)
_HELPER_NAME = re.compile(
    r"(set|fix|init|setup)_?(random_|global_|all_)?seeds?|seed_?everything|seed_all|"
    r"set_random_seed|random_seed"
)
# Frameworks whose seeding functions do not touch torch's generator.
_OTHER_FRAMEWORKS = ("numpy.", "random.", "tensorflow.", "jax.", "paddle.", "mindspore.")


@dataclass(frozen=True)
class SeedCall:
    """A call that seeds torch; `proven` False when only its name says so."""

    call: cst.Call
    proven: bool


def seed_calls(ctx: FileContext) -> list[SeedCall]:
    """The calls of the file that seed torch's generator (see the module docstring)."""
    found = []
    for call in ctx.calls:
        name = ctx.call_name(call)
        if name in TORCH_SEEDS:
            found.append(SeedCall(call, True))
        elif name in _LIBRARY_SEEDS:
            specific = argument(call, 1, "device_specific")
            if specific is None or (isinstance(specific, cst.Name) and specific.value == "False"):
                found.append(SeedCall(call, True))
        elif _named_helper(ctx, call, name):
            found.append(SeedCall(call, False))
    return found


def is_seeding_name(name: str) -> bool:
    """`name` reads as a seeding helper's (`set_seed`, `fix_random_seeds`,
    `seed_everything`)."""
    return _HELPER_NAME.fullmatch(name.lstrip("_")) is not None


def _named_helper(ctx: FileContext, call: cst.Call, name: str | None) -> bool:
    """A function of another module (or an unknown library) named like a seeding helper;
    the file's own helpers are followed instead."""
    func = call.func
    last = func.attr.value if isinstance(func, cst.Attribute) else None
    if isinstance(func, cst.Name):
        last = func.value
    if last is None or not is_seeding_name(last) or ctx.resolver.callees(call):
        return False
    if isinstance(func, cst.Attribute) and name is None:
        return False  # a method of some object (`env.seed`, `rng.set_seed`)
    return name is None or not name.startswith(_OTHER_FRAMEWORKS)

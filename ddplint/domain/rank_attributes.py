"""Rank attributes: attributes the project sets to this process's rank in one module and
reads in another (`args.rank = int(os.environ["RANK"])` in a set-up helper that takes the
trainer, `if self.rank == 0:` in the trainer's module, where the file alone sees only
`self.rank = 0` in its single-process branch).

A module's part (`assigned_rank_attributes`) is read from its own text, for its summary:
each attribute name spelled as a rank that every assignment in the module gives a value
traced to a per-process source (`RankEvidence.value_traced`: a rank function, the
RANK / LOCAL_RANK variables, a spawn index) or a constant in code that runs only when the
job is not distributed. The project decides the rest (`Project.rank_attribute_traced`):
every module whose text may assign the name (`rank_flags.setting_files`) is such a module,
one of them assigns a traced value, and no text sets it through its name in a string (an
option `--rank`, `setattr`, a config key). As with rank flags, an attribute is known by
its last name: the object travels between modules under other names (`args`, `self`, `cfg`)."""

from __future__ import annotations

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import RANK_NAME
from ddplint.domain.rank_evidence import rank_evidence
from ddplint.domain.ranks import int_literal
from ddplint.engine.model import Binding


def assigned_rank_attributes(ctx: FileContext) -> tuple[tuple[str, bool], ...]:
    """(name, traced here) for each attribute name spelled as a rank (`args.rank`,
    `self.local_rank`) every assignment of which in this module is a traced rank value or
    a constant where the job is not distributed; traced here: one of them is a value."""
    found: dict[str, list[bool | None]] = {}
    for key, bindings in ctx.model.bindings.items():
        if "." not in key or "[" in key:
            continue
        name = key.rpartition(".")[2]
        if RANK_NAME.match(name):
            found.setdefault(name, []).extend(_traced(ctx, b) for b in bindings)
    return tuple(
        sorted((name, True in traced) for name, traced in found.items() if False not in traced)
    )


def _traced(ctx: FileContext, binding: Binding) -> bool | None:
    """True for a value traced to a per-process source, None for a constant where the job
    is not distributed (it says nothing of the ranks), False for anything else."""
    if binding.kind != "assign" or binding.index is not None:
        return False
    if int_literal(binding.value) is not None:
        return None if domain_of(ctx).gates.single_process(binding.statement) else False
    return rank_evidence(ctx).value_traced(binding.value, binding.statement, 4)

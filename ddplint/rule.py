"""The Rule base class and the registry every rule module adds itself to."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from ddplint.diagnostics import Applicability, Severity

if TYPE_CHECKING:
    from ddplint.context import FileContext


@dataclass(frozen=True)
class FixSpec:
    """A fix a rule proposes, still in tree terms; the checker turns it into text edits.

    `replacements` maps an existing node to its replacement node (or source text);
    `insertions` puts whole lines of code before an existing statement, at its indent.
    """

    message: str
    replacements: tuple[tuple[cst.CSTNode, cst.CSTNode | str], ...] = ()
    insertions: tuple[tuple[cst.CSTNode, str], ...] = ()
    applicability: Applicability = Applicability.SAFE


@dataclass(frozen=True)
class Finding:
    """A rule's raw report: the node it points at, its message and maybe a fix."""

    node: cst.CSTNode
    message: str
    fix: FixSpec | None = None
    severity: Severity | None = None  # when this finding is milder than the rule's default
    # True when the finding rests on a guess (a name trusted over a value, a fact in a
    # module out of sight): reported only under `--preview`, marked unproven.
    unproven: bool = False
    # Code elsewhere the harm needs (the loaders a seed reaches): when none of it can run
    # (`ddplint.domain.liveness`), the finding is dropped; when none is known to run, it is
    # unproven. Empty: the node alone decides.
    rests_on: tuple[cst.CSTNode, ...] = ()
    # Code elsewhere that must run too (the seeding call inside a helper whose call the
    # finding points at): the finding is as live as the least live of them.
    runs_with: tuple[cst.CSTNode, ...] = ()


class Rule:
    """A check. Subclasses set the class attributes and implement `check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    explanation: ClassVar[str]
    fixable: ClassVar[Applicability | None] = None
    requires_distributed: ClassVar[bool] = True
    # The harm needs several processes (GPUs shared, ranks apart, one file written by
    # many): unproven in a script its project launches only as a job of one process. Not
    # so for a harm that one process meets too (a sample order that repeats, a write a
    # crash truncates, a launcher that passes an option the parser rejects).
    needs_several: ClassVar[bool] = True
    # In the default rule set (no `select`): the rules whose findings were right on first
    # contact with unseen repositories. The others run only when selected by code, prefix
    # or `ALL` (`select`, `extend-select`).
    default: ClassVar[bool] = True
    # Sources the rule must flag / must leave alone; the test suite runs both.
    flag: ClassVar[tuple[str, ...]] = ()
    allow: ClassVar[tuple[str, ...]] = ()

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        raise NotImplementedError


_REGISTRY: dict[str, type[Rule]] = {}


def register(cls: type[Rule]) -> type[Rule]:
    """Class decorator adding a rule to the registry."""
    if cls.code in _REGISTRY:
        raise ValueError(f"duplicate rule code {cls.code}")
    _REGISTRY[cls.code] = cls
    return cls


def all_rules() -> dict[str, type[Rule]]:
    """Every rule, by code, in code order."""
    _import_rule_packages()
    return dict(sorted(_REGISTRY.items()))


@functools.cache
def _import_rule_packages() -> None:
    """Import every `ddplint.rules` package once (the registry alone cannot tell: importing
    one rule's own analysis module registers that rule only)."""
    import ddplint.rules as package

    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{info.name}")

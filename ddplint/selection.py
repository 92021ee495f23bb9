"""Rule selectors (`DDP`, `DDP00`, `DDP005`, `ALL`) and the rule set they choose.

Besides the rules, one code is selectable: DDP999, a file ddplint cannot read, decode or
parse. It is reported whatever `select` says (a file that was not checked must not pass
silently) unless an `ignore` or per-file ignore names it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ddplint.parsing import PARSE_ERROR_CODE
from ddplint.rule import all_rules


class SelectorError(ValueError):
    """A selector that names no rule."""


def default_codes() -> set[str]:
    """The codes in force when nothing is selected: the rules of the default set (`Rule.default`),
    and DDP999."""
    return {code for code, rule in all_rules().items() if rule.default} | {PARSE_ERROR_CODE}


def known_codes() -> list[str]:
    """Every code a selector may choose: the rules', then DDP999."""
    return [*all_rules(), PARSE_ERROR_CODE]


def expand(selector: str, where: str) -> set[str]:
    """The codes a selector chooses; `where` says where it came from, for the error."""
    codes = known_codes()
    wanted = selector.strip().upper()
    if wanted == "ALL":
        return set(codes)
    chosen = {code for code in codes if code.startswith(wanted)}
    if not wanted or not chosen:
        raise SelectorError(
            f"unknown rule selector {selector!r} in {where}: "
            f"expected a code or code prefix such as DDP005 or DDP00 (see `ddplint rules`)"
        )
    return chosen


def resolve(
    select: Sequence[str] | None,
    ignore: Iterable[str],
    extend_select: Iterable[str],
    where: dict[str, str],
) -> set[str]:
    """Apply select (none given: the default set), then extend-select, then ignore, as ruff
    does; DDP999 stays unless ignored. An opt-in rule runs only when a selector names it (its
    code, a prefix, or `ALL`)."""
    chosen: set[str] = default_codes() if select is None else {PARSE_ERROR_CODE}
    for selector in select or []:
        chosen |= expand(selector, where["select"])
    for selector in extend_select:
        chosen |= expand(selector, where["extend-select"])
    for selector in ignore:
        chosen -= expand(selector, where["ignore"])
    return chosen

"""Rule selectors (`DDP`, `DDP00`, `DDP005`, `ALL`) and the rule set they choose."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ddplint.rule import all_rules


class SelectorError(ValueError):
    """A selector that names no rule."""


def expand(selector: str, where: str) -> set[str]:
    """The codes a selector chooses; `where` says where it came from, for the error."""
    codes = all_rules()
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
    """Apply select, then extend-select, then ignore, as ruff does."""
    chosen: set[str] = set()
    for selector in select if select is not None else ["ALL"]:
        chosen |= expand(selector, where["select"])
    for selector in extend_select:
        chosen |= expand(selector, where["extend-select"])
    for selector in ignore:
        chosen -= expand(selector, where["ignore"])
    return chosen

"""The options of `ddplint check`, shared by the command and its report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CheckOptions:
    """The options of `ddplint check`, as the command line gave them."""

    paths: tuple[Path, ...] = ()
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    force_exclude: bool = False
    no_respect_gitignore: bool = False
    config: Path | None = None
    isolated: bool = False
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    show_fixes: bool = False
    output_format: str = "text"
    output_file: Path | None = None
    quiet: bool = False
    statistics: bool = False
    exit_zero: bool = False
    no_cache: bool = False
    jobs: int | None = None
    preview: bool = False
    check_importers: bool = False

    @classmethod
    def from_click(cls, paths: tuple[Path, ...], values: Mapping[str, object]) -> CheckOptions:
        """From click's keyword arguments: an option not given at all is None, so that
        `--select` and `--exclude` replace the configuration only when given."""
        given = dict(values)
        for name in ("select", "exclude"):
            if not given.get(name):
                given[name] = None
        return cls(paths=paths, **given)  # type: ignore[arg-type]

"""`[tool.ddplint]` in pyproject.toml: finding it, reading it, refusing what it cannot mean."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from ddplint.selection import expand

# `[tool.ddplint]`, `[tool.ddplint.per-file-ignores]`, or `ddplint = {...}` under `[tool]`:
# how a pyproject that TOML cannot read shows that it meant to configure ddplint.
_MENTIONS_DDPLINT = re.compile(
    rb"^\s*\[\s*tool\s*\.\s*[\"']?ddplint\b|^\s*ddplint\s*=", re.MULTILINE
)
_LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "extend-exclude")
KNOWN_KEYS = frozenset({*_LIST_KEYS, "per-file-ignores", "preview"})


class ConfigError(ValueError):
    """A configuration the user must correct; the message says which key and where."""


@dataclass
class Config:
    """Settings from `[tool.ddplint]`; `root` is the folder of the pyproject.toml."""

    root: Path
    source: Path | None = None
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    exclude: list[str] | None = None  # None: the default exclusions
    extend_exclude: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    preview: bool = False  # show unproven findings too (`--preview`)

    def where(self, key: str) -> str:
        return f"{self.source} [tool.ddplint] {key}" if self.source else f"--{key}"


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml with a [tool.ddplint] table, from `start` upward.

    A pyproject.toml that mentions ddplint but cannot be read or parsed is an error, not
    a file to skip: running with other settings than the user wrote would mislead."""
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        try:
            if not candidate.is_file():
                continue
            raw = candidate.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read {candidate}: {exc.strerror or exc}") from exc
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            if _MENTIONS_DDPLINT.search(raw):
                raise ConfigError(f"{candidate} is not valid TOML: {exc}") from exc
            continue
        tool = data.get("tool", {})
        if isinstance(tool, dict) and "ddplint" in tool:
            return candidate
    return None


def load(path: Path) -> Config:
    """Read and validate one pyproject.toml's `[tool.ddplint]`."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from exc
    table = data.get("tool", {}).get("ddplint", {})
    config = Config(root=path.parent.resolve(), source=path)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.ddplint] must be a table")
    for key, value in table.items():
        if key not in KNOWN_KEYS:
            hint = key.replace("_", "-")
            extra = f" (did you mean {hint!r}?)" if hint in KNOWN_KEYS else ""
            raise ConfigError(
                f"{path}: unknown key {key!r} in [tool.ddplint]{extra}; "
                f"known keys: {', '.join(sorted(KNOWN_KEYS))}"
            )
        if key in _LIST_KEYS:
            setattr(config, key.replace("-", "_"), _string_list(path, key, value))
        elif key == "preview":
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: [tool.ddplint] preview must be true or false")
            config.preview = value
        else:
            config.per_file_ignores = _per_file_ignores(path, value)
    for key in ("select", "ignore", "extend-select"):
        for selector in getattr(config, key.replace("-", "_")) or []:
            expand(selector, config.where(key))
    for codes in config.per_file_ignores.values():
        for selector in codes:
            expand(selector, config.where("per-file-ignores"))
    return config


def _string_list(path: Path, key: str, value: object) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.ddplint] {key} must be a list of strings")
    return list(value)


def _per_file_ignores(path: Path, value: object) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: [tool.ddplint] per-file-ignores must be a table")
    return {
        pattern: _string_list(path, f"per-file-ignores.{pattern}", codes)
        for pattern, codes in value.items()
    }


def discover(start: Path, explicit: Path | None, isolated: bool) -> Config:
    """The configuration in force: `--config`, else the nearest pyproject, else defaults."""
    if isolated:
        return Config(root=Path(os.getcwd()).resolve())
    if explicit is not None:
        if not explicit.is_file():
            raise ConfigError(f"--config: no such file: {explicit}")
        return load(explicit)
    found = find_pyproject(start)
    return load(found) if found else Config(root=Path(os.getcwd()).resolve())

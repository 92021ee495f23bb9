"""Configuration read from ``GUARDS_*`` environment variables."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

DEFAULT_HANG_WARN = 300.0
DEFAULT_PARAM_CHECK_EVERY = 100
DEFAULT_INTERVAL = 0.25
SCALE_FROM = 256
DEFAULT_REPORT_DIR = "guards-reports"


@dataclass(frozen=True)
class Config:
    """Settings of one guarded process."""

    disabled: bool = False
    hang_warn: float = DEFAULT_HANG_WARN
    hang_timeout: float | None = None  # None: the process group's own timeout
    param_check_every: int = DEFAULT_PARAM_CHECK_EVERY
    report_dir: str = DEFAULT_REPORT_DIR
    interval: float | None = None  # None: DEFAULT_INTERVAL, longer for large jobs
    store: str | None = None


def _number(
    env: dict[str, str], name: str, default: float, kind: type, minimum: float, shown: str = ""
) -> float:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or value < minimum:
        warnings.warn(
            f"[guards] ignoring {name}={raw!r}: expected a {kind.__name__} >= {minimum}; "
            f"using the default {shown or default}",
            RuntimeWarning,
            stacklevel=3,
        )
        return default
    return float(value)


def _optional(env: dict[str, str], name: str, shown: str) -> float | None:
    if not env.get(name, "").strip():
        return None
    value = float(_number(env, name, -1.0, float, 0.1, shown))
    return None if value < 0 else value


def _interval(env: dict[str, str]) -> float | None:
    if not env.get("GUARDS_INTERVAL", "").strip():
        return None
    value = float(
        _number(env, "GUARDS_INTERVAL", -1.0, float, 0.01, "(0.25 s, more above 256 ranks)")
    )
    return None if value < 0 else value


def interval_for(config: Config, world_size: int) -> float:
    """Seconds between summaries: 0.25 s up to 256 ranks, then growing with the rank count so
    that the aggregators' work per second stays flat (1 s at 1,024 ranks)."""
    if config.interval is not None:
        return config.interval
    return DEFAULT_INTERVAL * max(1.0, world_size / SCALE_FROM)


def load(env: dict[str, str] | None = None) -> Config:
    """Read the configuration; a bad value warns and falls back to its default."""
    env = dict(os.environ if env is None else env)
    disable = env.get("GUARDS_DISABLE", "").strip().lower()
    return Config(
        disabled=disable in {"1", "true", "yes", "on"},
        hang_warn=float(_number(env, "GUARDS_HANG_WARN", DEFAULT_HANG_WARN, float, 0.1)),
        hang_timeout=_optional(env, "GUARDS_HANG_TIMEOUT", "(the process group's timeout)"),
        param_check_every=int(
            _number(env, "GUARDS_PARAM_CHECK_EVERY", DEFAULT_PARAM_CHECK_EVERY, int, 0)
        ),
        report_dir=env.get("GUARDS_REPORT_DIR") or DEFAULT_REPORT_DIR,
        interval=_interval(env),
        store=env.get("GUARDS_STORE") or None,
    )

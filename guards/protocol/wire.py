"""The store boundary: messages to compact JSON and back, and the protocol's version.

A dataclass or named tuple travels as the list of its field values, in declaration order; an
enum as its value; a verdict as ``[kind, *fields]``. Decoding is driven by the type annotations,
so a field added here is encoded and decoded without more code. Guards of different ``VERSION``
never read each other's records: the version is part of every key (``exchange``).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Callable
from typing import Any, TypeVar, Union

from .messages import VERDICTS, Kind, Summary, Verdict

VERSION = 2  # bump on any change of a message's fields or meaning
T = TypeVar("T")
Decoder = Callable[[Any], Any]
_DECODERS: dict[Any, Decoder] = {}
_BY_KIND = {cls.kind: cls for cls in VERDICTS}


def plain(value: Any) -> Any:
    """``value`` as JSON-ready lists, numbers and strings."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [plain(getattr(value, f.name)) for f in dataclasses.fields(value)]
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _fields(cls: type) -> list[tuple[str, Any]]:
    hints = typing.get_type_hints(cls)
    if dataclasses.is_dataclass(cls):
        return [(f.name, hints[f.name]) for f in dataclasses.fields(cls)]
    return [(name, hints[name]) for name in cls._fields]  # type: ignore[attr-defined]


def decoder(tp: Any) -> Decoder:
    """A function that rebuilds a value of type ``tp`` from its ``plain`` form (cached)."""
    found = _DECODERS.get(tp)
    if found is None:
        found = _DECODERS[tp] = _make(tp) or _same
    return found


def _same(value: Any) -> Any:
    return value


def _make(tp: Any) -> Decoder | None:
    """The decoder of ``tp``; None where the plain form is the value (numbers, strings, and
    lists or mappings of them): the aggregators decode every rank's summary each interval."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        inner = [a for a in args if a is not type(None)]
        one = _make(inner[0]) if len(inner) == 1 else None
        if one is None:
            return None
        return lambda v: None if v is None else one(v)
    if origin is list:
        item = _make(args[0])
        return None if item is None else lambda v: [item(x) for x in v]
    if origin is dict:
        value = _make(args[1])
        return None if value is None else lambda v: {k: value(x) for k, x in v.items()}
    if origin is tuple:
        parts = [_make(a) or _same for a in args]
        return lambda v: tuple(d(x) for d, x in zip(parts, v, strict=True))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    if isinstance(tp, type) and (dataclasses.is_dataclass(tp) or hasattr(tp, "_fields")):
        makers = [_make(hint) for _, hint in _fields(tp)]
        if not any(makers):
            return lambda v: tp(*v)
        pairs = [(i, m) for i, m in enumerate(makers) if m is not None]

        def build(v: list[Any]) -> Any:
            for i, m in pairs:
                v[i] = m(v[i])
            return tp(*v)

        return build
    return None


def encode_summary(summary: Summary) -> str:
    return _dumps(plain(summary))


def decode_summary(text: str | bytes) -> Summary:
    found: Summary = decoder(Summary)(json.loads(text))
    return found


def encode_verdict(verdict: Verdict) -> str:
    return _dumps([verdict.kind.value, *plain(verdict)])


def decode_verdict(text: str | bytes) -> Verdict:
    kind, *values = json.loads(text)
    found: Verdict = decoder(_BY_KIND[Kind(kind)])(values)
    return found


def encode(value: Any) -> str:
    """Any other record (a detail, a peer's address)."""
    return _dumps(plain(value))


def loads(text: str | bytes) -> Any:
    """A record of no fixed type, as plain values."""
    return json.loads(text)


def decode(text: str | bytes, tp: type[T]) -> T:
    found: T = decoder(tp)(json.loads(text))
    return found

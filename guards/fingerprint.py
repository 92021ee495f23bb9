"""What a collective call looks like: a compact, process-independent fingerprint.

The hot path builds ``meta``, a tuple of ints, strings' CRCs and tuples; hashing it with the
builtin ``hash`` is deterministic across processes because it holds no ``str`` or ``bytes``.
``describe`` turns a meta tuple back into words, off the hot path.
"""

from __future__ import annotations

import inspect
import zlib
from collections.abc import Callable
from typing import Any

import torch

# How each argument enters the fingerprint:
#   t  dtype and full shape          d  dtype and trailing shape (leading size may differ)
#   tl list of tensors, every shape  tn number of tensors and the first dtype
#   n  length of a list              v  plain value (src, dst, reduce op)
#   dt dtype only
SPECS: dict[str, tuple[tuple[str, str], ...]] = {
    "all_reduce": (("tensor", "t"), ("op", "v")),
    "broadcast": (("tensor", "t"), ("src", "v"), ("group_src", "v")),
    "reduce": (("tensor", "t"), ("dst", "v"), ("group_dst", "v"), ("op", "v")),
    "all_gather": (("tensor_list", "tl"), ("tensor", "dt")),
    "all_gather_into_tensor": (("output_tensor", "t"), ("input_tensor", "t")),
    "reduce_scatter": (("output", "dt"), ("input_list", "tl"), ("op", "v")),
    "reduce_scatter_tensor": (("output", "t"), ("input", "t"), ("op", "v")),
    "all_to_all": (("output_tensor_list", "tn"), ("input_tensor_list", "tn")),
    "all_to_all_single": (("output", "d"), ("input", "d")),
    "gather": (("tensor", "t"), ("dst", "v"), ("group_dst", "v")),
    "scatter": (("tensor", "t"), ("src", "v"), ("group_src", "v")),
    "barrier": (),
    "monitored_barrier": (),
    "broadcast_object_list": (("object_list", "n"), ("src", "v"), ("group_src", "v")),
    "all_gather_object": (("object_list", "n"),),
    "gather_object": (("dst", "v"), ("group_dst", "v")),
    "scatter_object_list": (("scatter_object_output_list", "n"), ("src", "v"), ("group_src", "v")),
}
OPS: tuple[str, ...] = (*SPECS, "ddp_bucket")
OP_CODES: dict[str, int] = {name: i for i, name in enumerate(OPS)}

_dtype_codes: dict[torch.dtype, int] = {}
_dtype_names: dict[int, str] = {}
_value_codes: dict[int, tuple[Any, int]] = {}
_value_names: dict[int, str] = {}


def dtype_code(dtype: torch.dtype) -> int:
    """A process-independent small integer for a dtype."""
    code = _dtype_codes.get(dtype)
    if code is None:
        name = str(dtype).removeprefix("torch.")
        code = zlib.crc32(name.encode())
        _dtype_codes[dtype] = code
        _dtype_names[code] = name
    return code


def dtype_name(code: int) -> str:
    """The dtype's short name (``float32``) for a code made in this process."""
    return _dtype_names.get(code, f"dtype#{code}")


def _value(value: Any) -> Any:
    """A hashable, process-independent stand-in for src/dst/op values."""
    if value is None or type(value) is int:
        return value
    cached = _value_codes.get(id(value))
    if cached is not None and cached[0] is value:
        return cached[1]
    text = str(value).rsplit(".", 1)[-1].lower()
    code = zlib.crc32(text.encode())
    _value_names[code] = text
    _value_codes[id(value)] = (value, code)  # keeps the object alive, so the id stays its own
    return code


def _tensor(t: Any) -> Any:
    if isinstance(t, torch.Tensor):
        dtype = t.dtype
        code = _dtype_codes.get(dtype)
        return (dtype_code(dtype) if code is None else code, t.shape)
    return None


def _dtype(t: Any) -> Any:
    return dtype_code(t.dtype) if isinstance(t, torch.Tensor) else None


def _trailing(t: Any) -> Any:
    if isinstance(t, torch.Tensor):
        return (dtype_code(t.dtype), tuple(t.shape[1:]))
    return None


def _tensor_list(value: Any) -> Any:
    return tuple(_tensor(t) for t in value) if value is not None else None


def _tensor_count(value: Any) -> Any:
    if not value:
        return (0, None)
    return (len(value), _dtype(value[0]))


def _length(value: Any) -> Any:
    return len(value) if value is not None else None


_PARTS: dict[str, Callable[[Any], Any]] = {
    "t": _tensor,
    "v": _value,
    "dt": _dtype,
    "d": _trailing,
    "tl": _tensor_list,
    "tn": _tensor_count,
    "n": _length,
}


def extractor(name: str, fn: Callable[..., Any]) -> Callable[[tuple, dict], tuple]:
    """Build ``meta(args, kwargs)`` for collective ``name`` with the signature of ``fn``."""
    sig = inspect.signature(fn).parameters
    params = list(sig)
    wanted = [
        (
            params.index(p),
            p,
            None if sig[p].default is inspect.Parameter.empty else sig[p].default,
            _PARTS[kind],
        )
        for p, kind in SPECS[name]
        if p in params
    ]

    def meta(args: tuple, kwargs: dict) -> tuple:
        n = len(args)
        return tuple(
            [
                part(args[index] if index < n else kwargs.get(p, default))
                for index, p, default, part in wanted
            ]
        )

    if len(wanted) == 2:  # all_reduce, all_gather, ...: unrolled, the hot path's largest cost
        (i0, p0, d0, f0), (i1, p1, d1, f1) = wanted

        def meta2(args: tuple, kwargs: dict) -> tuple:
            n = len(args)
            return (
                f0(args[i0] if i0 < n else kwargs.get(p0, d0)),
                f1(args[i1] if i1 < n else kwargs.get(p1, d1)),
            )

        return meta2
    return meta


def argument(fn: Callable[..., Any], name: str) -> Callable[[tuple, dict], Any]:
    """Build a fast getter of argument ``name`` (positional or keyword) of ``fn``."""
    sig = inspect.signature(fn)
    params = list(sig.parameters)
    if name not in params:
        return lambda args, kwargs: None
    index = params.index(name)
    default = sig.parameters[name].default
    default = None if default is inspect.Parameter.empty else default

    def get(args: tuple, kwargs: dict) -> Any:
        return args[index] if index < len(args) else kwargs.get(name, default)

    return get


def _shape(code_shape: Any, lead: str = "") -> str:
    code, shape = code_shape
    dims = ", ".join([lead, *map(str, shape)] if lead else map(str, shape))
    return f"{dtype_name(code)}[{dims}]"


def describe(op: str, meta: tuple) -> tuple[str, str]:
    """Words for a fingerprint: (``all_reduce float32[16]``, ``src=0, op=max``)."""
    if op == "ddp_bucket":
        model, iteration, bucket, code, numel = meta
        model_txt = f" model {model}" if model else ""
        step = f"iteration {iteration}, " if iteration >= 0 else ""
        return (
            f"DDP gradient all-reduce{model_txt} ({step}bucket {bucket}, "
            f"{dtype_name(code)}[{numel}])",
            "",
        )
    words = [op]
    extras = []
    for (param, kind), part in zip(SPECS.get(op, ()), meta, strict=False):
        if part is None:
            continue
        if kind == "t":
            words.append(_shape(part))
        elif kind == "d":
            words.append(_shape(part, "*"))
        elif kind == "tl":
            shapes = [_shape(p) for p in part if p is not None]
            if len(set(shapes)) == 1:
                words.append(f"{len(shapes)} x {shapes[0]}")
            else:
                words.append("[" + ", ".join(shapes) + "]")
        elif kind == "tn":
            count, code = part
            words.append(f"{count} x {dtype_name(code)}" if code is not None else f"{count} x")
        elif kind == "n":
            words.append(f"{part} object(s)")
        elif kind == "v":
            text = _value_names.get(part, str(part)) if param == "op" else str(part)
            if param == "op" and text == "sum":
                continue
            extras.append(f"{param}={text}")
    return " ".join(words), ", ".join(extras)

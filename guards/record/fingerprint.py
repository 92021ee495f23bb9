"""What a collective call looks like, as integers every rank computes alike.

A call is recorded as ``meta``: a nested tuple of plain ``int`` built from fixed encodings (the
tables below for ops, dtypes and reduce ops, ``NONE`` for an absent value, CRC-32 of UTF-8 text for
anything else). Its fingerprint is BLAKE2b over the flattened 64-bit integer vector
``(op, group, *meta)``: nothing that ranks compare comes from ``hash()``, whose value for ``None``,
strings and most objects differs between processes.

The call site is recorded beside the fingerprint, never in it: ranks may legitimately issue the
same collective from different lines (``if rank == 0: broadcast(x, 0) else: broadcast(y, 0)``).
``describe`` turns a meta tuple back into words, off the hot path.
"""

from __future__ import annotations

import hashlib
import inspect
import operator
import struct
import zlib
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import torch

Meta: TypeAlias = tuple["Part", ...]
Part: TypeAlias = int | tuple["Part", ...]
Args = tuple[Any, ...]
Kwargs = dict[str, Any]
Ranks = Sequence[int]
Getter = Callable[[Args, Kwargs, Ranks], Part]

NONE = -1  # an absent value (None); every other encoded integer is >= 0
_TABLE_END = 1024  # codes of the fixed tables stay below; hashed names start here
_MASK64 = (1 << 64) - 1

# How each argument enters the fingerprint:
#   t  dtype and full shape          d  dtype and trailing shape (leading size may differ)
#   tl list of tensors, every shape  tn number of tensors and the first dtype
#   n  length of a list              r  reduce op                 dt dtype only
#   root  the root rank as a global rank: ``src=``/``dst=`` is one already, ``group_src=``/
#         ``group_dst=`` (a rank within ``group``) is mapped through the group's ranks, so the
#         two spellings of one root agree
SPECS: dict[str, tuple[tuple[str, str], ...]] = {
    "all_reduce": (("tensor", "t"), ("op", "r")),
    "broadcast": (("tensor", "t"), ("src", "root")),
    "reduce": (("tensor", "t"), ("dst", "root"), ("op", "r")),
    "all_gather": (("tensor_list", "tl"), ("tensor", "dt")),
    "all_gather_into_tensor": (("output_tensor", "t"), ("input_tensor", "t")),
    "reduce_scatter": (("output", "dt"), ("input_list", "tl"), ("op", "r")),
    "reduce_scatter_tensor": (("output", "t"), ("input", "t"), ("op", "r")),
    "all_to_all": (("output_tensor_list", "tn"), ("input_tensor_list", "tn")),
    "all_to_all_single": (("output", "d"), ("input", "d")),
    "gather": (("tensor", "t"), ("dst", "root")),
    "scatter": (("tensor", "t"), ("src", "root")),
    "barrier": (),
    "monitored_barrier": (),
    "broadcast_object_list": (("object_list", "n"), ("src", "root")),
    "all_gather_object": (("object_list", "n"),),
    "gather_object": (("dst", "root"),),
    "scatter_object_list": (("scatter_object_output_list", "n"), ("src", "root")),
}
# collectives whose root defaults to global rank 0 when neither spelling is given (the others
# refuse the call then)
_ROOT_ZERO = frozenset(
    ("gather", "scatter", "broadcast_object_list", "gather_object", "scatter_object_list")
)
OPS: tuple[str, ...] = (*SPECS, "ddp_bucket")
OP_CODES: dict[str, int] = {name: i for i, name in enumerate(OPS)}

DTYPES: tuple[str, ...] = (
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "complex32",
    "complex64",
    "complex128",
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint16",
    "uint32",
    "uint64",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
)
REDUCE_OPS: tuple[str, ...] = (
    "sum",
    "avg",
    "product",
    "min",
    "max",
    "band",
    "bor",
    "bxor",
    "premul_sum",
)
_DTYPE_TABLE = {name: i for i, name in enumerate(DTYPES)}
_REDUCE_TABLE = {name: i for i, name in enumerate(REDUCE_OPS)}
_dtype_codes: dict[torch.dtype, int] = {}
_reduce_codes: dict[int, tuple[Any, int]] = {}
_names: dict[int, str] = {}  # codes of hashed names, for describe()


def text_code(text: str) -> int:
    """A code for a name outside the fixed tables: ``_TABLE_END`` + CRC-32 of its UTF-8."""
    code = _TABLE_END + zlib.crc32(text.encode("utf-8"))
    _names[code] = text
    return code


def dtype_code(dtype: torch.dtype) -> int:
    """The fixed code of a dtype (its index in ``DTYPES``, or a code of its name)."""
    code = _dtype_codes.get(dtype)
    if code is None:
        name = str(dtype).removeprefix("torch.")
        code = _DTYPE_TABLE[name] if name in _DTYPE_TABLE else text_code(name)
        _dtype_codes[dtype] = code
    return code


def dtype_name(code: int) -> str:
    """The dtype's short name (``float32``) for a code."""
    if 0 <= code < len(DTYPES):
        return DTYPES[code]
    return _names.get(code, f"dtype#{code}")


def reduce_code(op: Any) -> int:
    """The fixed code of a reduce op: a ``RedOpType``, a ``ReduceOp`` or a ``ReduceOp`` value.

    A ``ReduceOp`` object prints with its address, so its name comes from its ``op`` field.
    """
    cached = _reduce_codes.get(id(op))  # by id: hashing a pybind enum costs a call
    if cached is not None and cached[0] is op:
        return cached[1]
    code = _reduce_code(op)
    if len(_reduce_codes) >= 256:  # ReduceOp objects made per call
        _reduce_codes.clear()
    _reduce_codes[id(op)] = (op, code)  # keeps the object alive, so the id stays its own
    return code


def _reduce_code(op: Any) -> int:
    kind = getattr(op, "op", op)
    name = getattr(kind, "name", None)
    if not isinstance(name, str):
        name = str(kind).rsplit(".", 1)[-1]
    name = name.lower()
    return _REDUCE_TABLE[name] if name in _REDUCE_TABLE else text_code(name)


def reduce_name(code: int) -> str:
    if 0 <= code < len(REDUCE_OPS):
        return REDUCE_OPS[code]
    return _names.get(code, f"op#{code}")


def _integer(value: Any) -> int:
    if value is None:
        return NONE
    if type(value) is int:
        return value
    try:
        return operator.index(value)
    except TypeError:
        return text_code(type(value).__name__)  # not a rank: the call fails on every rank


def _tensor(t: Any) -> Part:
    if isinstance(t, torch.Tensor):
        dtype = t.dtype
        code = _dtype_codes.get(dtype)
        return (dtype_code(dtype) if code is None else code, t.shape)
    return NONE


def _dtype(t: Any) -> Part:
    return dtype_code(t.dtype) if isinstance(t, torch.Tensor) else NONE


def _trailing(t: Any) -> Part:
    if isinstance(t, torch.Tensor):
        return (dtype_code(t.dtype), tuple(t.shape[1:]))
    return NONE


def _tensor_list(value: Any) -> Part:
    return tuple(_tensor(t) for t in value) if value is not None else NONE


def _tensor_count(value: Any) -> Part:
    if not value:
        return (0, NONE)
    return (len(value), _dtype(value[0]))


def _length(value: Any) -> Part:
    return len(value) if value is not None else NONE


_PARTS: dict[str, Callable[[Any], Part]] = {
    "t": _tensor,
    "r": reduce_code,
    "dt": _dtype,
    "d": _trailing,
    "tl": _tensor_list,
    "tn": _tensor_count,
    "n": _length,
}


def _flatten(part: Part, out: list[int]) -> None:
    """Append ``part`` to ``out``; a tuple becomes ``-(2 + length)`` and its items, so the
    vector decodes unambiguously (every encoded value is >= ``NONE``)."""
    if isinstance(part, tuple):
        out.append(-2 - len(part))
        for item in part:
            _flatten(item, out)
    else:
        out.append(int(part))


def vector(op_code: int, group_code: int, meta: Meta) -> list[int]:
    """The integer vector that a fingerprint digests."""
    out = [op_code, group_code]
    _flatten(meta, out)
    return out


def fingerprint(op_code: int, group_code: int, meta: Meta) -> int:
    """A 63-bit digest of ``vector(...)``, the same in every process and on every Python."""
    values = vector(op_code, group_code, meta)
    packed = struct.pack(f"<{len(values)}Q", *(v & _MASK64 for v in values))
    return int.from_bytes(hashlib.blake2b(packed, digest_size=8).digest(), "little") >> 1


def root_rank(global_rank: Any, group_rank: Any, ranks: Ranks, default: int) -> int:
    """The root of a rooted collective as a global rank.

    ``global_rank`` (``src``/``dst``) is one already; ``group_rank`` (``group_src``/``group_dst``)
    indexes ``ranks``, the group's global ranks ordered by group rank (as
    ``dist.get_process_group_ranks`` returns them). Neither given: ``default``. Both, or a group
    rank outside the group: ``NONE`` (torch refuses the call on that rank).
    """
    if group_rank is None:
        return default if global_rank is None else _integer(global_rank)
    if global_rank is not None:
        return NONE
    index = _integer(group_rank)
    return ranks[index] if 0 <= index < len(ranks) else NONE


def _root(name: str, fn: Callable[..., Any], param: str) -> Getter:
    global_of = argument(fn, param)
    group_of = argument(fn, f"group_{param}")
    default = 0 if name in _ROOT_ZERO else NONE

    def root(args: Args, kwargs: Kwargs, ranks: Ranks) -> Part:
        return root_rank(global_of(args, kwargs), group_of(args, kwargs), ranks, default)

    return root


def _plain(index: int, param: str, default: Any, part: Callable[[Any], Part]) -> Getter:
    def get(args: Args, kwargs: Kwargs, ranks: Ranks) -> Part:
        return part(args[index] if index < len(args) else kwargs.get(param, default))

    return get


def extractor(name: str, fn: Callable[..., Any]) -> Callable[[Args, Kwargs, Ranks], Meta]:
    """Build ``meta(args, kwargs, ranks)`` for collective ``name`` with the signature of ``fn``;
    ``ranks`` are the global ranks of the call's group, ordered by group rank."""
    sig = inspect.signature(fn).parameters
    params = list(sig)
    spec = [(p, kind) for p, kind in SPECS[name] if p in sig]

    def spot(p: str, kind: str) -> tuple[int, str, Any, Callable[[Any], Part]]:
        default = sig[p].default
        return (
            params.index(p),
            p,
            None if default is inspect.Parameter.empty else default,
            _PARTS[kind],
        )

    if len(spec) == 2 and all(kind != "root" for _, kind in spec):
        # all_reduce, all_gather, ...: unrolled, the hot path's largest cost
        (i0, p0, d0, f0), (i1, p1, d1, f1) = (spot(p, kind) for p, kind in spec)

        def meta2(args: Args, kwargs: Kwargs, ranks: Ranks) -> Meta:
            n = len(args)
            return (
                f0(args[i0] if i0 < n else kwargs.get(p0, d0)),
                f1(args[i1] if i1 < n else kwargs.get(p1, d1)),
            )

        return meta2
    getters = [_root(name, fn, p) if kind == "root" else _plain(*spot(p, kind)) for p, kind in spec]

    def meta(args: Args, kwargs: Kwargs, ranks: Ranks) -> Meta:
        return tuple([get(args, kwargs, ranks) for get in getters])

    return meta


def argument(fn: Callable[..., Any], name: str) -> Callable[[Args, Kwargs], Any]:
    """Build a fast getter of argument ``name`` (positional or keyword) of ``fn``."""
    sig = inspect.signature(fn)
    params = list(sig.parameters)
    if name not in params:
        return lambda args, kwargs: None
    index = params.index(name)
    default = sig.parameters[name].default
    default = None if default is inspect.Parameter.empty else default

    def get(args: Args, kwargs: Kwargs) -> Any:
        return args[index] if index < len(args) else kwargs.get(name, default)

    return get


def _shape(part: Part, lead: str = "") -> str:
    if not isinstance(part, tuple):
        return "?"
    code, shape = part
    dims = [str(d) for d in shape] if isinstance(shape, tuple) else []
    text = ", ".join([lead, *dims] if lead else dims)
    return f"{dtype_name(code) if isinstance(code, int) else '?'}[{text}]"


def _words(kind: str, part: Part) -> str:
    if kind == "t":
        return _shape(part)
    if kind == "d":
        return _shape(part, "*")
    if kind == "tl" and isinstance(part, tuple):
        shapes = [_shape(p) for p in part if p != NONE]
        if len(set(shapes)) == 1:
            return f"{len(shapes)} x {shapes[0]}"
        return "[" + ", ".join(shapes) + "]"
    if kind == "tn" and isinstance(part, tuple):
        count, code = part
        return f"{count} x {dtype_name(code)}" if isinstance(code, int) and code != NONE else ""
    if kind == "n":
        return f"{part} object(s)"
    return ""


def describe(op: str, meta: Meta) -> tuple[str, str]:
    """Words for a fingerprint: (``all_reduce float32[16]``, ``src=0, op=max``)."""
    if op == "ddp_bucket":
        model, iteration, bucket, code, numel = meta
        model_txt = f" model {model}" if model else ""
        step = f"iteration {iteration}, " if isinstance(iteration, int) and iteration >= 0 else ""
        name = dtype_name(code) if isinstance(code, int) else "?"
        return (f"DDP gradient all-reduce{model_txt} ({step}bucket {bucket}, {name}[{numel}])", "")
    words = [op]
    extras = []
    for (param, kind), part in zip(SPECS.get(op, ()), meta, strict=False):
        if part == NONE:
            continue
        if kind == "root":
            extras.append(f"{param}={part}")
        elif kind == "r":
            name = reduce_name(part) if isinstance(part, int) else "?"
            if name != "sum":
                extras.append(f"{param}={name}")
        else:
            text = _words(kind, part)
            if text:
                words.append(text)
    return " ".join(words), ", ".join(extras)

"""Distributed switches spelled as a name: a strategy, launcher or distributed type
compared with the name of one (`strategy == "ddp"`, `args.launcher == "none"`,
`accelerator.distributed_type == DistributedType.NO`). Lightning's `ddp*`, `fsdp*` and
`deepspeed*` strategies (and a mode ending in `_ddp` or `_fsdp`: `distributed ==
"data_parallel_ddp"`), mmengine's `pytorch` / `slurm` / `mpi` launchers, accelerate's
`MULTI_*` types, a `distribution_type` of `multi` and a `parallel_method` of
`DistributedDataParallel` start one process per device;
`single_device`, `single_gpu`, `single`, `local`, `cpu`, `none` and `NO` run one.
The process group's init method compared with None (fairseq's and mmf's
`distributed_init_method is not None`) is a switch too: set, the job is distributed."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.names import dotted

# The variable holding the switch: `strategy`, `args.launcher`, `strategy_type`, ...
_SWITCH_NAME = re.compile(
    r"(^|_)(strategy|launcher|distributed_type|distribution_type|dist(ributed)?_mode"
    r"|parallel(_method|_mode)?|distributed)(_type|_name)?$"
)
_DISTRIBUTED = re.compile(
    r"^(ddp|fsdp|deepspeed|horovod|hvd)(_\w+)?$|^(pytorch|slurm|mpi|megatron_lm|multi(_\w+)?)$"
    r"|^distributed_?data_?parallel$|^\w+_(ddp|fsdp)$",
    re.IGNORECASE,
)
_SINGLE = re.compile(r"^(none|single(_device|_gpu)?|no|local|cpu)$", re.IGNORECASE)
# The process group's init method: `distributed_init_method`, `config.distributed.init_method`
# (a bare `init_method` may be a weight initialiser, as in Megatron).
_INIT_METHOD = re.compile(r"(^|[._])dist(ributed)?(_\w+)?[._](\w+_)?init_method$", re.IGNORECASE)


def switch_when(compared: cst.BaseExpression, target: cst.ComparisonTarget) -> bool | None:
    """True if `compared <target>` holding means one process runs (`launcher == "none"`,
    `distributed_init_method is None`), False if it means one process per device
    (`strategy == "ddp"`, `launcher in ("pytorch", "slurm")`, `init_method is not None`),
    None when it is no such switch."""
    if _INIT_METHOD.search(dotted(compared) or "") and _is_none(target.comparator):
        return {cst.Is: True, cst.IsNot: False}.get(type(target.operator))
    switch = compared.attr.value if type(compared) is cst.Attribute else None
    if type(compared) is cst.Name:
        switch = compared.value
    if switch is None or not _SWITCH_NAME.search(switch.lower()):
        return None
    names = _names(target.comparator)
    if not names:
        return None
    if all(_DISTRIBUTED.match(n) for n in names):
        single = False
    elif all(_SINGLE.match(n) for n in names):
        single = True
    else:
        return None
    if isinstance(target.operator, (cst.Equal, cst.In, cst.Is)):
        return single
    if isinstance(target.operator, (cst.NotEqual, cst.NotIn, cst.IsNot)):
        return not single
    return None


def _names(expr: cst.BaseExpression) -> list[str]:
    """The mode names `expr` spells: a string, an enum member (`DistributedType.NO`), or a
    tuple/list/set of them; [] when any part is something else."""
    parts = (
        [e.value for e in expr.elements]
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set))
        else [expr]
    )
    found: list[str] = []
    for part in parts:
        if type(part) is cst.SimpleString:
            value = part.evaluated_value
            if not isinstance(value, str):
                return []
            found.append(value)
        elif type(part) is cst.Attribute and _enum_name(part.value) == "DistributedType":
            found.append(part.attr.value)
        else:
            return []
    return found


def _enum_name(expr: cst.BaseExpression) -> str | None:
    """`DistributedType` for `DistributedType` or `accelerate.DistributedType`."""
    if type(expr) is cst.Attribute:
        return expr.attr.value
    return expr.value if type(expr) is cst.Name else None


def _is_none(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "None"

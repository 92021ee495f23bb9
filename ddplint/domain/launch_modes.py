"""Distributed switches spelled as a name: a strategy, launcher or distributed type
compared with the name of one (`strategy == "ddp"`, `args.launcher == "none"`,
`accelerator.distributed_type == DistributedType.NO`). Lightning's `ddp*`, `fsdp*` and
`deepspeed*` strategies, mmengine's `pytorch` / `slurm` / `mpi` launchers and accelerate's
`MULTI_*` types start one process per device; `single_device`, `none` and `NO` run one."""

from __future__ import annotations

import re

import libcst as cst

# The variable holding the switch: `strategy`, `args.launcher`, `strategy_type`, ...
_SWITCH_NAME = re.compile(r"(^|_)(strategy|launcher|distributed_type|dist_mode)(_type|_name)?$")
_DISTRIBUTED = re.compile(
    r"^(ddp|fsdp|deepspeed|horovod|hvd)(_\w+)?$|^(pytorch|slurm|mpi|megatron_lm|multi_\w+)$",
    re.IGNORECASE,
)
_SINGLE = re.compile(r"^(none|single_device|no)$", re.IGNORECASE)


def switch_when(switch: str | None, target: cst.ComparisonTarget) -> bool | None:
    """True if `switch <target>` holding means one process runs (`launcher == "none"`),
    False if it means one process per device (`strategy == "ddp"`, `launcher in
    ("pytorch", "slurm")`), None when it is no such switch. `switch` is the last name of
    the compared variable (`launcher` for `args.launcher`)."""
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
        if isinstance(part, cst.SimpleString):
            value = part.evaluated_value
            if not isinstance(value, str):
                return []
            found.append(value)
        elif isinstance(part, cst.Attribute) and _enum_name(part.value) == "DistributedType":
            found.append(part.attr.value)
        else:
            return []
    return found


def _enum_name(expr: cst.BaseExpression) -> str | None:
    """`DistributedType` for `DistributedType` or `accelerate.DistributedType`."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return expr.value if isinstance(expr, cst.Name) else None

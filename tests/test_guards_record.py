"""What ranks compare is the same in every process: fingerprints and rolling digests."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.distributed as dist
from guards_helpers import REPO, environment

from guards.record.fingerprint import (
    NONE,
    OP_CODES,
    SPECS,
    describe,
    extractor,
    fingerprint,
    vector,
)

# Every public collective called with its default arguments (no process group is needed to
# fingerprint a call). Defaults such as ``group_src=None`` were once hashed with ``hash(None)``.
PROBE = textwrap.dedent(
    """
    import json, os, sys
    import torch
    import torch.distributed as dist
    from guards.record.fingerprint import OP_CODES, extractor
    from guards.record.ledger import GroupLedger

    junk = [object() for _ in range(int(sys.argv[1]))]  # shift this process's address layout
    t = torch.ones(4, 3)
    calls = {
        "all_reduce": ((t,), {}),
        "broadcast": ((t, 0), {}),
        "reduce": ((t, 0), {}),
        "all_gather": (([t, t, t],  t), {}),
        "all_gather_into_tensor": ((torch.ones(12, 3), t), {}),
        "reduce_scatter": ((t, [t, t, t]), {}),
        "reduce_scatter_tensor": ((t, torch.ones(12, 3)), {}),
        "all_to_all": (([t, t, t], [t, t, t]), {}),
        "all_to_all_single": ((torch.ones(6, 3), torch.ones(9, 3)), {}),
        "gather": ((t,), {"dst": 0}),
        "scatter": ((t,), {"src": 0}),
        "barrier": ((), {}),
        "monitored_barrier": ((), {}),
        "broadcast_object_list": (([None, None],), {"src": 0}),
        "all_gather_object": (([None, None, None], {"a": 1}), {}),
        "gather_object": (({"a": 1},), {"dst": 0}),
        "scatter_object_list": (([None],), {"src": 0}),
        "max_op": ((t,), {"op": dist.ReduceOp.MAX}),
        "max_op_object": ((t,), {"op": dist.ReduceOp(dist.ReduceOp.MAX)}),
    }
    out = {}
    for name, (args, kwargs) in calls.items():
        op = "all_reduce" if name.startswith("max_op") else name
        meta = extractor(op, getattr(dist, op))(args, kwargs, [0, 1, 2])
        for group in ("WORLD", "group 1 [0,1,2]"):
            ledger = GroupLedger(group, [0, 1, 2])
            ledger.record(op, OP_CODES[op], meta, "x.py:1")
            ledger.record(op, OP_CODES[op], meta, "x.py:2")
            out[f"{name}/{group}"] = [e[1:3] for e in ledger.last(2)]
    bucket = (0, 7, 1, 0, 1024)
    ledger = GroupLedger("WORLD", [0, 1, 2])
    out["ddp_bucket"] = ledger.fingerprint(OP_CODES["ddp_bucket"], bucket)
    print(json.dumps({"ops": sorted(calls), "fps": out}))
    """
)


def _probe(seed: str, junk: int) -> dict:
    env = environment({"PYTHONHASHSEED": seed})
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(junk)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.timeout(300)
def test_fingerprints_are_equal_in_separate_processes() -> None:
    results = [_probe(seed, junk) for seed, junk in (("0", 0), ("1", 5000), ("random", 123))]
    first = results[0]
    assert set(SPECS) <= set(first["ops"]), "every public collective is probed"
    for other in results[1:]:
        assert other["fps"] == first["fps"]
    # and they separate what they should: the group, the reduce op
    fps = first["fps"]
    assert fps["all_reduce/WORLD"] != fps["all_reduce/group 1 [0,1,2]"]
    assert fps["all_reduce/WORLD"] != fps["max_op/WORLD"]
    assert fps["max_op/WORLD"] == fps["max_op_object/WORLD"]


def _meta(name: str, *args: object, ranks: tuple[int, ...] = (0, 1), **kwargs: object) -> tuple:
    return extractor(name, getattr(dist, name))(args, kwargs, ranks)


def test_meta_holds_only_integers_with_a_sentinel_for_none() -> None:
    meta = _meta("broadcast", torch.ones(2), 0)
    assert meta == ((0, (2,)), 0)  # float32 is code 0; the root is one integer
    flat = vector(OP_CODES["broadcast"], 7, meta)
    assert all(type(v) is int for v in flat)
    # tuples are length-prefixed: nesting cannot make two metas collide
    assert vector(0, 0, ((1, 2), 3)) != vector(0, 0, (1, (2, 3)))
    assert fingerprint(0, 0, ((1, 2), 3)) != fingerprint(0, 0, (1, (2, 3)))


def test_unknown_dtypes_and_reduce_ops_get_named_codes() -> None:
    meta = _meta("all_reduce", torch.ones(3, dtype=torch.uint8), op=dist.ReduceOp.BAND)
    assert describe("all_reduce", meta) == ("all_reduce uint8[3]", "op=band")
    complex_meta = _meta("all_reduce", torch.ones(3, dtype=torch.complex64))
    assert describe("all_reduce", complex_meta)[0] == "all_reduce complex64[3]"


def test_defaults_and_absent_values_are_not_shown() -> None:
    meta = _meta("gather", torch.ones(2), dst=1)
    assert describe("gather", meta) == ("gather float32[2]", "dst=1")
    meta = _meta("broadcast_object_list", [1, 2], src=0)
    assert describe("broadcast_object_list", meta) == ("broadcast_object_list 2 object(s)", "src=0")


def test_a_root_given_as_a_group_rank_is_its_global_rank() -> None:
    t = torch.ones(4)
    subgroup = (1, 2)  # global ranks ordered by group rank: group rank 1 is global rank 2
    as_global = _meta("broadcast", t, src=2, ranks=subgroup)
    as_group = _meta("broadcast", t, group_src=1, ranks=subgroup)
    assert as_global == as_group == ((0, (4,)), 2)
    assert _meta("broadcast", t, group_src=0, ranks=subgroup) != as_global
    assert fingerprint(1, 9, as_global) == fingerprint(1, 9, as_group)
    assert describe("broadcast", as_group) == ("broadcast float32[4]", "src=2")
    for op, tensor_first in (("reduce", True), ("gather", True), ("gather_object", False)):
        head = (t,) if tensor_first else ({"a": 1},)
        a = _meta(op, *head, dst=1, ranks=subgroup)
        b = _meta(op, *head, group_dst=0, ranks=subgroup)
        assert a == b, op
    assert _meta("scatter", t, src=2, ranks=subgroup) == _meta(
        "scatter", t, group_src=1, ranks=subgroup
    )
    assert _meta("scatter_object_list", [None], src=2, ranks=subgroup) == _meta(
        "scatter_object_list", [None], group_src=1, ranks=subgroup
    )


def test_a_default_root_is_global_rank_0_where_torch_defaults_to_it() -> None:
    assert _meta("broadcast_object_list", [1]) == _meta("broadcast_object_list", [1], src=0)
    assert _meta("gather_object", 1, ranks=(0, 1)) == _meta("gather_object", 1, dst=0)
    assert _meta("gather", torch.ones(2)) == _meta("gather", torch.ones(2), dst=0)
    assert _meta("scatter", torch.ones(2)) == _meta("scatter", torch.ones(2), group_src=0)
    # broadcast and reduce have no default root: torch refuses the call
    assert _meta("broadcast", torch.ones(2)) == ((0, (2,)), NONE)


def test_an_invalid_root_is_none() -> None:
    # both spellings, or a group rank outside the group: torch refuses the call on that rank
    assert _meta("broadcast", torch.ones(2), src=0, group_src=0)[1] == NONE
    assert _meta("broadcast", torch.ones(2), group_src=2, ranks=(0, 1))[1] == NONE

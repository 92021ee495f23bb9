"""`domain.rank_kinds`: whether an expression holds the global or the local rank (DDP018,
DDP019 and the device picks of DDP020 ask it)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain.rank_kinds import RankKind

HEADER = """\
import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
"""
GLOBAL, LOCAL = RankKind.GLOBAL, RankKind.LOCAL


def kind_of_use(body: str) -> RankKind | None:
    """The kind of the argument of the last `use(...)` call."""
    source = HEADER + textwrap.dedent(body)
    ctx = FileContext("t.py", source, cst.parse_module(source))
    call = [c for c in ctx.calls if ctx.code(c.func) == "use"][-1]
    return ctx.domain.rank_kinds.kind(call.args[0].value, call)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('use(int(os.environ["RANK"]))', GLOBAL),
        ('use(int(os.environ["LOCAL_RANK"]))', LOCAL),
        ("use(dist.get_rank())", GLOBAL),
        ("use(args.rank)", GLOBAL),
        ("use(self.rank)", None),
        ("use(args.local_rank)", LOCAL),
        ("rank = dist.get_rank()\nuse(rank % torch.cuda.device_count())", LOCAL),
        ('r = int(os.environ["RANK"])\nrank = r\nuse(rank)', GLOBAL),
        # Named for the local rank: the name decides, whatever it was assigned from.
        ("local_rank = args.rank\nuse(local_rank)", LOCAL),
        # A constant is a rank in no run: the other values decide.
        ("rank = 0 if single else dist.get_rank()\nuse(rank)", GLOBAL),
        (
            'gpu = -1\nif dist.is_initialized():\n    gpu = int(os.environ["LOCAL_RANK"])\n'
            "use(gpu)",
            LOCAL,
        ),
        # A local rank with a global fallback in one function is neither.
        ('gpu = int(os.environ["LOCAL_RANK"]) if a else dist.get_rank()\nuse(gpu)', None),
        ("gpu = args.gpu\nuse(gpu)", None),
        # Helpers of the file, and what callers pass for a parameter.
        ("def which():\n    return dist.get_rank()\nuse(which())", GLOBAL),
        ('def setup(gpu):\n    use(gpu)\nsetup(int(os.environ["LOCAL_RANK"]))', LOCAL),
        (
            'def setup(gpu):\n    use(gpu)\nsetup(int(os.environ["LOCAL_RANK"]))\n'
            "setup(dist.get_rank())",
            GLOBAL,
        ),
        ("def setup(gpu):\n    use(gpu)\nsetup(args.gpu)", None),
        # The index mp.spawn passes: local and global at once on one node.
        (
            "def worker(rank):\n    use(rank)\nmp.spawn(worker, nprocs=2)\nworker(dist.get_rank())",
            None,
        ),
        # A coordinate along a device-mesh dimension, not the node-local rank.
        ("use(get_local_rank())", LOCAL),
        ('use(mesh.get_local_rank("dp"))', None),
        ('dp_mesh = mesh["dp"]\nuse(dp_mesh.get_local_rank())', None),
    ],
)
def test_rank_kind(body, expected):
    assert kind_of_use(body) is expected

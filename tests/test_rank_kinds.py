"""`domain.rank_kinds`: whether an expression holds the global or the local rank (DDP018,
DDP019 and the device picks of DDP020 ask it)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.rank_kinds import RankKind
from ddplint.project.queries import Project

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
    return domain_of(ctx).rank_kinds.kind(call.args[0].value, call)


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
        # A helper named for a rank: its returns decide where they give a kind, else its name.
        (
            "def get_local_rank():\n    if not dist.is_initialized():\n        return 0\n"
            "    return dist.get_rank()\nuse(get_local_rank())",
            GLOBAL,
        ),
        ('def get_rank():\n    return int(os.environ["LOCAL_RANK"])\nuse(get_rank())', LOCAL),
        ("def get_local_rank():\n    return 0\nuse(get_local_rank())", LOCAL),
        # A return of no known kind (the rank in a per-node group) leaves it to the name.
        (
            "def get_local_rank():\n    if node_group is None:\n        return dist.get_rank()\n"
            "    return dist.get_rank(group=node_group)\nuse(get_local_rank())",
            LOCAL,
        ),
        ("def get_rank():\n    return self_rank()\nuse(get_rank())", GLOBAL),
        ('use(mesh.get_local_rank("dp"))', None),
        ('dp_mesh = mesh["dp"]\nuse(dp_mesh.get_local_rank())', None),
    ],
)
def test_rank_kind(body, expected):
    assert kind_of_use(body) is expected


def test_another_module_helper_returns_decide(write):
    """A project module's rank helper is summarised by what it returns, so a caller in
    another module sees `comm.get_local_rank()` returning `dist.get_rank()` as global."""
    write("pyproject.toml", "")
    comm = write(
        "comm.py",
        "import torch.distributed as dist\n\n\ndef get_local_rank():\n"
        "    return dist.get_rank() if dist.is_initialized() else 0\n\n\n"
        "def get_rank():\n    return helper()\n",
    )
    main = write(
        "main.py",
        "from comm import get_local_rank, get_rank\n\nuse(get_local_rank())\nuse(get_rank())\n",
    )
    project = Project.load([str(main)])
    summary = project.summaries[str(comm)]
    assert summary.function("get_local_rank").returned_rank == "global"
    assert summary.function("get_rank") is None  # returns no known rank: nothing to record
    source = main.read_text()
    ctx = FileContext(str(main), source, cst.parse_module(source), project=project)
    first, second = [c for c in ctx.calls if ctx.code(c.func) == "use"]
    assert domain_of(ctx).rank_kinds.kind(first.args[0].value, first) is GLOBAL
    assert domain_of(ctx).rank_kinds.kind(second.args[0].value, second) is GLOBAL  # by its name

"""Which modules run on every rank is decided over the project's call graph once: in a
package where every module names the package (so every file is a candidate caller of every
module), asking each module asks each one's own use of the process group once, and each
look-up the text index follows is stepped once for the whole run (LoRA's transformers copy
took minutes when both were redone per question). Counted, never timed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from ddplint.project.module_index import ModuleIndex
from ddplint.project.queries import Project

N = 8


def _module(i: int) -> str:
    """Module `i` of a ring: it calls the next one's helper (the last calls the first) and,
    for the model classes, a method through the package (`pkg.mI.Model.forward`)."""
    following = (i + 1) % N
    return (
        f"import pkg.m{following}\n"
        "from pkg import shared\n\n\n"
        "class Model:\n"
        "    def forward(self, x):  # local_rank: a word every file of the ring writes\n"
        "        return x\n\n\n"
        f"def helper{i}(x):\n"
        f"    shared.log(x)\n"
        f"    return pkg.m{following}.helper{following}(pkg.m{following}.Model().forward(x))\n"
    )


@pytest.fixture
def ring(write: Callable[[str, str], Path]) -> list[str]:
    write("pyproject.toml", "")
    write("pkg/__init__.py", "")
    write("pkg/shared.py", "def log(x):\n    print(x)  # world_size\n")
    paths = [str(write(f"pkg/m{i}.py", _module(i))) for i in range(N)]
    return paths


def test_a_ring_of_callers_is_decided_once(ring, write, monkeypatch):
    uses: Counter[str] = Counter()
    steps: Counter[tuple[str, str, str]] = Counter()
    original_uses = Project._uses_process_group
    original_step = ModuleIndex._step

    def counting_uses(self: Project, path: str) -> bool:
        uses[path] += 1
        return original_uses(self, path)

    def counting_step(self: ModuleIndex, item: tuple[str, str, str]) -> object:
        steps[item] += 1
        return original_step(self, item)

    monkeypatch.setattr(Project, "_uses_process_group", counting_uses)
    monkeypatch.setattr(ModuleIndex, "_step", counting_step)
    project = Project.load(ring)
    assert not any(project.runs_distributed_at(p) for p in ring)
    assert max(uses.values()) == 1
    assert max(steps.values()) == 1

    # One module of the ring starts a process group: every module of the ring runs on
    # every rank, since each one is called, through the ring, from it.
    start = (
        "import torch.distributed as dist\n\n\ndef start():\n    dist.init_process_group('nccl')\n"
    )
    write("pkg/m0.py", _module(0) + "\n\n" + start + "\n\nhelper0(start())\n")
    project = Project.load(ring)
    assert all(project.runs_distributed_at(p) for p in ring)

"""A file that imports a module of its project is parsed once per run, not once to
summarise it and again to check it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import libcst
import pytest

from ddplint.cache import Cache
from ddplint.checker import check_file
from ddplint.rule import all_rules
from ddplint.runner import run

UTILS = """import torch
import torch.distributed as dist


def save_on_master(state, path):
    if dist.get_rank() == 0:
        torch.save(state, path)
"""

MAIN = """import torch.distributed as dist
from utils import save_on_master


def main(model):
    dist.init_process_group("gloo")
    if dist.get_rank() == 0:
        dist.barrier()
    save_on_master(model.state_dict(), "ckpt.pt")
"""


def test_each_passed_file_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "utils.py").write_text(UTILS)
    (tmp_path / "main.py").write_text(MAIN)
    codes = set(all_rules())
    files = [tmp_path / "main.py", tmp_path / "utils.py"]
    parsed: Counter[str] = Counter()
    real_parse = libcst.parse_module

    def counting_parse(source: str, *args: object, **kwargs: object) -> libcst.Module:
        parsed[source] += 1
        return real_parse(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(libcst, "parse_module", counting_parse)
    outcome = run(files, lambda _: codes, Cache(None), jobs=1)
    assert parsed == Counter({MAIN: 1, UTILS: 1})
    assert outcome.parsed == 2
    # The reused parse gives what a fresh check with the project gives.
    assert outcome.project is not None
    main = str(tmp_path / "main.py")
    shown = [d for d in outcome.diagnostics if d.path.endswith("main.py")]
    fresh = check_file(main, MAIN.encode(), codes, outcome.project).diagnostics
    assert [(d.code, d.start) for d in shown] == [(d.code, d.start) for d in fresh]
    assert shown

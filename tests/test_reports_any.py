"""`reports_any` answers what `check_context` would report, stopping at the first finding
(the runner asks it of the rules whose findings a file's callers decide)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from ddplint.checker import check_context, reports_any
from ddplint.context import FileContext
from ddplint.rule import Rule, all_rules
from ddplint.runner import CALLERS_DECIDE

CORPUS = Path(__file__).parent.parent / "corpus" / "lint"
DECIDING = sorted(CALLERS_DECIDE)
CASES = sorted(p for p in CORPUS.glob("ddp0*.py") if p.name[:6].upper() in CALLERS_DECIDE)

TWO_DEVICES = """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.cuda.set_device(0){first}
model = torch.nn.Linear(2, 2).to("cuda:1"){second}
"""


def context(source: str, path: str = "train.py") -> FileContext:
    return FileContext(path, source, cst.parse_module(source))


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_it_agrees_with_a_full_check(case: Path) -> None:
    ctx = context(case.read_text(encoding="utf-8"), str(case))
    assert reports_any(ctx, DECIDING) is bool(check_context(ctx, DECIDING).diagnostics)


def test_a_suppressed_finding_is_not_reported() -> None:
    quiet = "  # noqa: DDP001"
    assert reports_any(context(TWO_DEVICES.format(first=quiet, second=quiet)), ["DDP001"]) is False
    assert reports_any(context(TWO_DEVICES.format(first=quiet, second="")), ["DDP001"]) is True


def test_it_stops_at_the_first_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    rule = all_rules()["DDP001"]
    asked: list[object] = []
    original = rule.check

    def counting(self: Rule, ctx: FileContext):  # type: ignore[no-untyped-def]
        for finding in original(self, ctx):
            asked.append(finding)
            yield finding

    monkeypatch.setattr(rule, "check", counting)
    ctx = context(TWO_DEVICES.format(first="", second=""))
    assert reports_any(ctx, ["DDP001"]) is True
    assert len(asked) == 1
    assert len(check_context(ctx, ["DDP001"]).diagnostics) == 2

"""Who runs a helper where other project modules call it (`ddplint.project.callers`): a
whole-project run reads each calling module's parse from the run (`Project.parse_of`),
and gives the findings a run of the helper alone with its project gives."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import libcst
import pytest

from ddplint.cache import Cache
from ddplint.rule import all_rules
from ddplint.runner import run

METRICS = """\"\"\"Embeddings on cuda:0; in a distributed run the callers decide who embeds.\"\"\"
import torch


def embed(encoder, batches):
    encoder.to("cuda:0")
    return [encoder(b.to("cuda:0")) for b in batches]
"""

TRAIN = """import os

import torch
import torch.distributed as dist

from metrics import embed


def main(encoder, batches):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return embed(encoder, batches)


if __name__ == "__main__":
    main(None, [])
"""


def _run(tmp_path: Path, names: list[str]) -> tuple[Counter[str], list[tuple[str, str, int]]]:
    parsed: Counter[str] = Counter()
    real_parse = libcst.parse_module

    def counting_parse(source: str, *args: object, **kwargs: object) -> libcst.Module:
        parsed[source] += 1
        return real_parse(source, *args, **kwargs)  # type: ignore[arg-type]

    codes = set(all_rules())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(libcst, "parse_module", counting_parse)
        outcome = run([tmp_path / n for n in names], lambda _: codes, Cache(None), jobs=1)
    found = [(Path(d.path).name, d.code, d.start.row) for d in outcome.diagnostics]
    return parsed, found


def test_a_calling_module_the_run_checks_is_parsed_once(tmp_path: Path) -> None:
    (tmp_path / "metrics.py").write_text(METRICS)
    (tmp_path / "train.py").write_text(TRAIN)
    parsed, found = _run(tmp_path, ["metrics.py", "train.py"])
    assert parsed == Counter({METRICS: 1, TRAIN: 1})
    # every rank runs `embed` (train.py calls it outside any rank gate): cuda:0 on each
    assert ("metrics.py", "DDP001", 6) in found
    _, alone = _run(tmp_path, ["metrics.py"])
    assert [f for f in found if f[0] == "metrics.py"] == alone

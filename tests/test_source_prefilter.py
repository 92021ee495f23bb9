"""The prefilter (`might_be_distributed`) passes exactly the files that one alternation of
its hints, as it was written before, matched: it reads each hint as a substring instead."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ddplint.source import might_be_distributed

OLD_HINT = re.compile(
    rb"distributed|DataParallel|DistributedSampler|set_epoch|get_rank|local_rank|LOCAL_RANK"
    rb"|world_size|WORLD_SIZE|no_sync|is_main_process|barrier|torchrun|main_process"
    rb"|all_reduce|all_gather|\.backward\("
)
_PIECES = st.sampled_from(
    [
        b"distributed",
        b"Distributed",
        b"Sampler",
        b"main_",
        b"process",
        b"is_",
        b".backward",
        b"(",
        b"no_sync",
        b"barrier",
        b"world_",
        b"size",
        b"all_",
        b"reduce",
        b"x",
        b"\n",
        b" ",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_PIECES, max_size=8).map(b"".join))
def test_the_hints_pass_what_the_old_pattern_passed(data: bytes) -> None:
    assert might_be_distributed(data) == (OLD_HINT.search(data) is not None)


def test_plain_model_code_is_skipped_and_a_training_loop_is_not() -> None:
    assert not might_be_distributed(b"import torch\nclass Net(torch.nn.Module):\n    pass\n")
    assert might_be_distributed(b"for x in loader:\n    loss(x).backward()\n")
    assert might_be_distributed(b"if utils.is_main_process():\n    save()\n")

"""A script that pins its job to one process at its entry (`ddplint.domain.entry_pins`,
through `processes.single_process`): an assertion or a raise on the value its job is sized
by, or on a distributed switch, before the job starts."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddplint.context import FileContext
from ddplint.domain.processes import single_process

WORKER = """
import os
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(args, rank):
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(args.num_gpus)
    dist.init_process_group("nccl")

"""


def _single(entry: str) -> bool:
    source = WORKER + textwrap.dedent(entry)
    return single_process(FileContext("sample.py", source, cst.parse_module(source)))


@pytest.mark.parametrize(
    ("entry", "one"),
    [
        # The entry asserts the size of the job is 1, then calls the worker once.
        ('if __name__ == "__main__":\n    assert args.num_gpus == 1\n    worker(args, 0)', True),
        ('if __name__ == "__main__":\n    assert 1 == args.num_gpus\n    worker(args, 0)', True),
        # A raise unless it is 1, in the function the entry calls, before the loop.
        (
            "def main():\n    if args.num_gpus != 1:\n        raise NotImplementedError\n"
            "    for r in range(args.num_gpus):\n        mp.Process(target=worker, args=(args, r))"
            '\n\nif __name__ == "__main__":\n    main()',
            True,
        ),
        # A distributed switch asserted off.
        ('if __name__ == "__main__":\n    assert not args.distributed\n    worker(args, 0)', True),
        # The check comes after the job has started: it pins nothing.
        ('if __name__ == "__main__":\n    worker(args, 0)\n    assert args.num_gpus == 1', False),
        # A branch that does not stop the script is no pin.
        (
            'if __name__ == "__main__":\n    if args.num_gpus != 1:\n        print("one GPU")\n'
            "    worker(args, 0)",
            False,
        ),
        # Pinned to 1, but the job is also sized by something else.
        (
            'if __name__ == "__main__":\n    assert args.num_gpus == 1\n'
            "    mp.spawn(worker, args=(args,), nprocs=args.world)",
            False,
        ),
        # A value the job is not sized by.
        ('if __name__ == "__main__":\n    assert args.batch == 1\n    worker(args, 0)', False),
        # Any count passes.
        ('if __name__ == "__main__":\n    assert args.num_gpus >= 1\n    worker(args, 0)', False),
        # The assertion says the job is distributed.
        ('if __name__ == "__main__":\n    assert args.distributed\n    worker(args, 0)', False),
    ],
)
def test_entry_pins_one_process(entry: str, one: bool) -> None:
    assert _single(entry) is one

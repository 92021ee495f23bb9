"""One answer to "which variable holds the local rank here", shared by the fixes of DDP001,
DDP015 and DDP020: the innermost and latest binding before the node, named for the local
rank or assigned one; a `self.` attribute only inside a method of the class that sets it."""

from __future__ import annotations

import textwrap

from ddplint.api import fix_source

HEADER = """\
import os
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
"""


def fixed(body: str, code: str) -> str:
    return fix_source(HEADER + textwrap.dedent(body), unsafe=True, select=[code])


def test_the_innermost_binding_wins_over_a_later_module_level_one():
    body = """
    def main():
        gpu = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
        model = nn.DataParallel(nn.Linear(2, 2).cuda(gpu))

    if __name__ == "__main__":
        local_rank = int(os.environ["LOCAL_RANK"])
        main()
    """
    assert "DDP(nn.Linear(2, 2).cuda(gpu), device_ids=[gpu])" in fixed(body, "DDP015")


def test_a_value_that_holds_the_local_rank_names_it_whatever_the_variable_is_called():
    body = """
    def main():
        gpu_index = int(os.environ["SLURM_LOCALID"])
        dist.init_process_group("nccl")
        x = torch.zeros(2).cuda()
    """
    assert "torch.cuda.set_device(gpu_index)" in fixed(body, "DDP020")


def test_an_attribute_of_the_same_class_is_used_inside_its_methods():
    body = """
    class Trainer:
        def __init__(self):
            self.local_rank = int(os.environ["LOCAL_RANK"])

        def setup(self):
            dist.init_process_group("nccl")
            self.model = nn.Linear(2, 2).cuda()
    """
    assert "torch.cuda.set_device(self.local_rank)" in fixed(body, "DDP020")


def test_an_attribute_of_some_class_is_not_used_in_a_module_level_function():
    body = """
    class Config:
        def __init__(self):
            self.local_rank = int(os.environ["LOCAL_RANK"])

    def main():
        dist.init_process_group("nccl")
        model = nn.Linear(2, 2).to("cuda:0")
    """
    assert 'to("cuda:0")' in fixed(body, "DDP001")

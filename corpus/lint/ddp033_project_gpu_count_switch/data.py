"""Data for the restoration trainer: one process on one GPU, or one process per GPU under
`torchrun --nproc_per_node=N train.py --n_gpus N`."""
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Data:
    def __init__(self, args):
        self.local_rank = 0
        if args.n_gpus > 1:
            self.local_rank = int(os.environ["LOCAL_RANK"])
            torch.cuda.set_device(self.local_rank)
            dist.init_process_group("nccl")
        pairs = TensorDataset(torch.randn(512, 3, 48, 48), torch.randn(512, 3, 96, 96))
        self.sampler = DistributedSampler(pairs) if args.n_gpus > 1 else None
        self.loader = DataLoader(pairs, batch_size=16, shuffle=self.sampler is None,
                                 sampler=self.sampler, drop_last=True)

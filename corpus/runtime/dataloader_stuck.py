"""A DataLoader worker hangs in __getitem__ while the ranks issue mismatched collectives: the
guard stops the job, and the stuck worker must end with its rank (no process left behind)."""

import time

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset


class Slow(Dataset):
    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int) -> torch.Tensor:
        if index >= 8:
            time.sleep(3600)  # a worker stuck on a dead network filesystem
        return torch.ones(4)


dist.init_process_group("gloo")
rank = dist.get_rank()
loader = DataLoader(Slow(), batch_size=4, num_workers=1)
for step, batch in enumerate(loader):
    if step == 1:
        print(f"FAULT {time.time()}", flush=True)
        if rank == 0:
            dist.all_reduce(batch)  # line:reduce
        else:
            dist.broadcast(batch, src=0)  # line:broadcast
    dist.all_reduce(batch)

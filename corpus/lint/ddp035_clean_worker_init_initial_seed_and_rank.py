"""Sequential recommendation, one torchrun process per GPU: torch is seeded alike (the item
embeddings must start equal), and each worker re-seeds Python and NumPy from its torch
seed plus the rank, so the negative samples differ between ranks."""
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Sequences(Dataset):
    def __init__(self, histories, item_num):
        self.histories = histories
        self.item_num = item_num

    def __len__(self):
        return len(self.histories)

    def __getitem__(self, idx):
        history = self.histories[idx]
        negatives = [random.randint(1, self.item_num) for _ in history]
        return torch.tensor(history), torch.tensor(negatives)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    torch.manual_seed(12345)

    def worker_init_reset_seed(worker_id):
        initial_seed = torch.initial_seed() % 2**31
        worker_seed = initial_seed + worker_id + dist.get_rank()
        random.seed(worker_seed)
        np.random.seed(worker_seed)

    data = Sequences([[1, 2, 3, 4]] * 1024, item_num=5000)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler, num_workers=4,
                        worker_init_fn=worker_init_reset_seed)
    model = DDP(nn.Embedding(5001, 64).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    for epoch in range(50):
        sampler.set_epoch(epoch)
        for history, negatives in loader:
            pos = model(history.cuda(local_rank))
            neg = model(negatives.cuda(local_rank))
            loss = nn.functional.softplus(neg.sum(-1) - pos.sum(-1)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

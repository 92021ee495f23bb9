"""A reward model trained by a script run as `torchrun --nproc_per_node=8 -m
scripts.train_reward`: its training loop sits at the top level of the module (no
`__main__` block), it shards the preference pairs with a DistributedSampler and steps an
AdamW of its own, but never wraps the model: the eight copies never exchange a gradient."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class PreferencePairs(Dataset):
    def __init__(self, path):
        self.pairs = torch.load(path)

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, i):
        chosen, rejected = self.pairs[i]
        return chosen, rejected


dist.init_process_group("nccl")
local_rank = int(os.environ["LOCAL_RANK"])
device = torch.device("cuda", local_rank)
torch.cuda.set_device(device)

pairs = PreferencePairs("pairs.pt")
sampler = DistributedSampler(pairs, shuffle=True)
loader = DataLoader(pairs, batch_size=16, sampler=sampler)
reward = nn.Sequential(nn.Embedding(50304, 512), nn.Flatten(1), nn.LazyLinear(1)).to(device)
optimizer = torch.optim.AdamW(reward.parameters(), lr=1e-5, weight_decay=0.0)

for epoch in range(2):
    sampler.set_epoch(epoch)
    for chosen, rejected in loader:
        margin = reward(chosen.to(device)) - reward(rejected.to(device))
        loss = -nn.functional.logsigmoid(margin).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # expect: DDP045
        optimizer.step()
    if dist.get_rank() == 0:
        torch.save(reward.state_dict(), f"reward_epoch{epoch}.pt")

dist.destroy_process_group()

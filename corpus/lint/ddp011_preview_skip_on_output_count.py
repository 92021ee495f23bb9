"""Detection-style step that skips the backward when the model returned no proposals:
the count may be fixed by the model (a constant number of proposals) or decided by the
data (proposals kept per image): unproven, where a skip on the loss's value is a hang."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class ProposalHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(256, 1)

    def forward(self, features):
        scores = self.score(features).squeeze(-1)
        return [scores[i] for i in range(scores.shape[0])]


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(ProposalHead().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(1000):
        features = torch.randn(16, 256, device="cuda")
        proposals = model(features)
        if len(proposals) == 0:
            continue  # expect-preview: DDP011
        loss = torch.stack(proposals).sigmoid().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()

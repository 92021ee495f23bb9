"""Semi-supervised step that trains only on confident pseudo-labels and skips the step
when the teacher is confident about none of this rank's images: how many pass the
threshold is the data's, so one rank can skip the backward while the others wait in DDP's
gradient all-reduce."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    student = DDP(nn.Linear(512, 10).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(student.parameters(), lr=0.03, momentum=0.9)
    unlabeled = TensorDataset(torch.randn(8192, 512), torch.randn(8192, 512))
    sampler = DistributedSampler(unlabeled)
    loader = DataLoader(unlabeled, batch_size=64, sampler=sampler)
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for weak, strong in loader:
            logits = student(torch.cat([weak, strong]).cuda())
            weak_logits, strong_logits = logits.chunk(2)
            confidence, pseudo = weak_logits.detach().softmax(-1).max(-1)
            keep = torch.nonzero(confidence > 0.95).squeeze(1)
            if len(keep) == 0:
                continue  # expect: DDP011
            loss = nn.functional.cross_entropy(strong_logits[keep], pseudo[keep])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()

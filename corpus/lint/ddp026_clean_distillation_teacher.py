"""Self-distillation: a frozen copy of the bare module teaches the DDP student."""
import copy
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

TEMPERATURE = 2.0


def distill_loss(student_logits, teacher_logits, labels, alpha=0.5):
    soft = nn.functional.kl_div(
        nn.functional.log_softmax(student_logits / TEMPERATURE, dim=-1),
        nn.functional.softmax(teacher_logits / TEMPERATURE, dim=-1),
        reduction="batchmean",
    ) * TEMPERATURE**2
    return alpha * soft + (1 - alpha) * nn.functional.cross_entropy(student_logits, labels)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    data = TensorDataset(torch.randn(4096, 24), torch.randint(0, 4, (4096,)))
    student = DDP(nn.Sequential(nn.Linear(24, 48), nn.ReLU(), nn.Linear(48, 4)).to(device),
                  device_ids=[local_rank])
    optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)

    for epoch in range(6):
        teacher = copy.deepcopy(student.module).eval()
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            with torch.no_grad():
                teacher_logits = teacher(x)
                sanity = student.module(x)
            loss = distill_loss(student(x), teacher_logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {loss.item():.3f} drift {(sanity - teacher_logits).abs().max():.2e}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

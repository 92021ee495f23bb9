"""The same rank-0 validation of a timm model: whether it holds buffers is out of sight."""
import os

import timm
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from engine.evaluation import evaluate


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = timm.create_model("convnext_tiny", num_classes=100)
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(1000):
        loss = model(torch.randn(32, 3, 224, 224).cuda()).logsumexp(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 100 == 0 and dist.get_rank() == 0:
            print(evaluate(model, [], "cuda"))  # expect-preview: DDP021
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

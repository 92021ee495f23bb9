import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from core.options import parse_option


def main(opt):
    torch.cuda.set_device(opt.local_rank)
    dist.init_process_group("nccl")
    model = DDP(nn.Linear(64, 64).cuda(opt.local_rank), device_ids=[opt.local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(opt.epochs):
        x = torch.randn(opt.batch_size, 64, device=f"cuda:{opt.local_rank}")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main(parse_option("pretrain"))

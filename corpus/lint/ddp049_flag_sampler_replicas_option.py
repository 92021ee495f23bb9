"""The process group comes from torchrun, but the sampler is told `--num_gpus` (default 4)
replicas and the per-process batch is split by it too: on 8 GPUs without `--num_gpus 8`,
ranks 4 to 7 fail building the sampler; on 2, half the images are never read."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_gpus", type=int, default=4)
    parser.add_argument("--batch_size", type=int, default=64)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(4000, 20), torch.randint(0, 2, (4000,)))
    sampler = DistributedSampler(
        data,
        num_replicas=args.num_gpus,  # expect: DDP049
        rank=dist.get_rank(),
        shuffle=True,
        drop_last=True,
    )
    loader = DataLoader(data, batch_size=args.batch_size // args.num_gpus, sampler=sampler)
    model = DDP(nn.Linear(20, 2).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(40):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

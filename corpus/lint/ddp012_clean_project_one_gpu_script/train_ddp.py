"""Multi-GPU training of the patch classifier: torchrun --nproc_per_node=4 train_ddp.py."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from common import build_model, is_main_process, load_patches
from train_one_gpu import parse_args


def main() -> None:
    args = parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(build_model().cuda(), device_ids=[local_rank])
    dataset = load_patches("train")
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=64, sampler=sampler)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, labels in loader:
            loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    if is_main_process():
        torch.save(model.module.state_dict(), "classifier.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

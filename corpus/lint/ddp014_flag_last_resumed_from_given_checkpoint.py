"""A grounding-model trainer that saves `ckpt_last.pth` at the end of every epoch and can
continue from a checkpoint the user names with `--init_from`: its model and optimizer
state are restored from it. The file the documented restart passes is rewritten in place."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--init_from", type=str, default=None)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--log_dir", type=str, default="outputs")
    return parser.parse_args()


def main():
    args = parse()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = torch.load(os.path.join(args.log_dir, "pairs.pt"))
    dataset = TensorDataset(data["points"], data["boxes"])
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=4)
    net = DistributedDataParallel(
        nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 6)).cuda(),
        device_ids=[local_rank],
    )
    optimizer = torch.optim.AdamW(net.parameters(), lr=2e-4)
    if args.init_from:
        checkpoint = torch.load(args.init_from, map_location="cpu")
        net.module.load_state_dict(checkpoint["model_state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        net.train()
        for points, boxes in loader:
            loss = nn.functional.smooth_l1_loss(net(points.cuda()), boxes.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            save_dict = {
                "model_state_dict": net.module.state_dict(),
                "optimizer_state_dict": optimizer.state_dict(),
            }
            torch.save(save_dict, os.path.join(args.log_dir, "ckpt_last.pth"))  # expect: DDP014
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

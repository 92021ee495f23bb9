"""Point-cloud/text contrastive pretraining with two back ends: torch DDP, or the
DeepSpeed engine. `model.backward` and `model.step` are read only on the DeepSpeed path,
where `model` is the engine `deepspeed.initialize` returned, which has both."""

import argparse
import os

import deepspeed
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from encoders import PointTextModel, contrastive_loss, make_loader


def train_one_epoch(model, loader, optimizer, args):
    model.train()
    for points, tokens in loader:
        points, tokens = points.cuda(non_blocking=True), tokens.cuda(non_blocking=True)
        loss = contrastive_loss(*model(points, tokens))
        if args.deepspeed:
            model.backward(loss)
            model.step()
        else:
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--deepspeed", action="store_true")
    parser.add_argument("--deepspeed_config", default="ds_config.json")
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = PointTextModel().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)
    if args.deepspeed:
        deepspeed.init_distributed()
        model, optimizer, _, _ = deepspeed.initialize(
            model=model, optimizer=optimizer, config=args.deepspeed_config
        )
    else:
        dist.init_process_group("nccl")
        model = DistributedDataParallel(model, device_ids=[local_rank])

    loader = make_loader(batch_size=64)
    for epoch in range(args.epochs):
        loader.sampler.set_epoch(epoch)
        train_one_epoch(model, loader, optimizer, args)


if __name__ == "__main__":
    main()

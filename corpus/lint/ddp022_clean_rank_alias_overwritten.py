"""A speech-synthesis trainer whose `--rank` option also answers to `--local_rank`
(argparse stores both as `args.rank`); the script replaces the value from the RANK variable
the launcher sets before any use, and hands the namespace on to its config after that."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="conf/tts.yaml")
    parser.add_argument("--rank", "--local_rank", default=0, type=int, help="set by the launcher")
    parser.add_argument("--world_size", default=1, type=int)
    args = parser.parse_args()
    args.world_size = int(os.environ.get("WORLD_SIZE", 1))
    args.rank = int(os.environ["RANK"]) if "RANK" in os.environ else 0
    config = {"lr": 2e-4, "epochs": 400}
    config.update(vars(args))
    dist.init_process_group("nccl", rank=args.rank, world_size=args.world_size)
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(nn.GRU(80, 256).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"])
    mels = torch.load("mels.pt", map_location="cpu")
    for epoch in range(config["epochs"]):
        for batch in mels.split(16):
            output, _ = model(batch.cuda())
            loss = output.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Style-transfer training: the entry point. Trains through `engine.trainer_v2`; the first
trainer, `engine/trainer.py`, stays in the tree but nothing imports it any more."""

import argparse
import os

import torch
import torch.distributed as dist

from engine.trainer_v2 import Trainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--config", default="configs/base.yaml")
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    settings = {"trainer": {"lr": 2e-4, "epochs": args.epochs}}
    trainer = Trainer(settings["trainer"], local_rank)
    trainer.fit()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""The loader and the trainer come from a configuration: train.py reaches the data module
and the trainer module only through the `vision` package, whose `__init__` imports both.
The trainer's epoch loop never moves the data module's sampler to the next epoch."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import vision
from vision.utils import distributed_is_initialized

CONFIG = {"loader": "TrainLoader", "root": "/data/train", "epochs": 90}


def main():
    dist.init_process_group("nccl")
    assert distributed_is_initialized()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    loader = getattr(vision.datasets, CONFIG["loader"])(CONFIG["root"], batch_size=64)
    model = DDP(torch.nn.Linear(3 * 32 * 32, 10).cuda(), device_ids=[local_rank])
    trainer = vision.trainer.Trainer(model, loader, CONFIG["epochs"])
    trainer.fit()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

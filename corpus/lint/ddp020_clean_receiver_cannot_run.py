"""Two `.cuda()` calls on the `--gpu`-less branch that never place anything: the trainer
object is a plain class (no `nn.Module`, no `.cuda()`), so the call raises AttributeError,
and `critic` is only created on the other branch, so reading it raises UnboundLocalError.
Neither puts a tensor on GPU 0."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class SemiSupervisedTrainer:
    def __init__(self, backbone, threshold):
        self.backbone = backbone
        self.threshold = threshold

    def step(self, x):
        return self.backbone(x).softmax(-1).max(-1).values.gt(self.threshold).float().mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=int, default=None)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    trainer = SemiSupervisedTrainer(nn.Linear(16, 4), 0.95)
    if args.gpu is not None:
        torch.cuda.set_device(args.gpu)
        critic = nn.Linear(4, 1)
        critic.cuda(args.gpu)
        trainer.backbone = DistributedDataParallel(trainer.backbone.cuda(args.gpu), device_ids=[args.gpu])
    else:
        trainer.cuda()
        critic.cuda()
    print(trainer.step(torch.randn(8, 16, device=f"cuda:{args.gpu}")))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

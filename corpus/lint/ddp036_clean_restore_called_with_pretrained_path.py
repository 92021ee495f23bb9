"""Fine-tune a one-step forecaster into a multi-step one: `torchrun --nproc_per_node=8
finetune.py`. The restore helper loads the pretrained one-step model and its counters;
the fine-tuning starts a fresh optimizer on purpose."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Finetuner:
    def __init__(self, params):
        self.params = params
        self.model = nn.Sequential(nn.Linear(69, 256), nn.GELU(), nn.Linear(256, 69)).cuda()
        self.restore_checkpoint(params.pretrained_ckpt_path)
        self.model = DDP(self.model, device_ids=[params.local_rank])
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=params.lr)

    def restore_checkpoint(self, checkpoint_path):
        checkpoint = torch.load(checkpoint_path, map_location="cpu")
        self.model.load_state_dict(checkpoint["model_state"])
        self.iters = checkpoint["iters"]
        self.start_epoch = checkpoint["epoch"]

    def train(self, epochs):
        for _ in range(epochs):
            state = torch.randn(32, 69, device="cuda")
            loss = (self.model(self.model(state)) - state.roll(2, 0)).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        if dist.get_rank() == 0:
            torch.save({"model_state": self.model.module.state_dict(),
                        "optimizer_state_dict": self.optimizer.state_dict(),
                        "iters": self.iters, "epoch": epochs}, "multistep.tar")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_ckpt_path", default="runs/onestep/best_ckpt.tar")
    parser.add_argument("--lr", type=float, default=1e-5)
    params = parser.parse_args()
    dist.init_process_group("nccl")
    params.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(params.local_rank)
    Finetuner(params).train(50)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

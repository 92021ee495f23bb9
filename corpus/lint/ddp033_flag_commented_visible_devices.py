"""A surface-reconstruction trainer that once pinned each process to its GPU with
`CUDA_VISIBLE_DEVICES` and now only keeps that line as a comment: every process sees all
GPUs, so `--is_continue` restores rank 0's tensors onto GPU 0 in every process."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Runner:
    def __init__(self, args):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        # os.environ["CUDA_VISIBLE_DEVICES"] = str(self.local_rank)
        torch.cuda.set_device(self.local_rank)
        dist.init_process_group("nccl")
        self.model = nn.Linear(256, 4).cuda()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=5e-4)
        self.checkpoints = os.path.join(args.expdir, "checkpoints")
        self.start_epoch = 0
        if args.is_continue:
            saved = torch.load(os.path.join(self.checkpoints, "latest.pth"))  # expect: DDP033
            self.model.load_state_dict(saved["model_state_dict"])
            self.optimizer.load_state_dict(saved["optimizer_state_dict"])
            self.start_epoch = saved["epoch"]
        self.model = DDP(self.model, device_ids=[self.local_rank])

    def run(self, epochs):
        for epoch in range(self.start_epoch, epochs):
            loss = self.model(torch.randn(512, 256).cuda()).abs().mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if dist.get_rank() == 0:
                state = {
                    "epoch": epoch,
                    "model_state_dict": self.model.module.state_dict(),
                    "optimizer_state_dict": self.optimizer.state_dict(),
                }
                tmp = os.path.join(self.checkpoints, "latest.pth.tmp")
                torch.save(state, tmp)
                os.replace(tmp, os.path.join(self.checkpoints, "latest.pth"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--expdir", default="exps/scan65")
    parser.add_argument("--is_continue", action="store_true")
    Runner(parser.parse_args()).run(2000)

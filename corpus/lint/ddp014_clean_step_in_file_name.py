"""Diffusion-style trainer: every checkpoint file name holds the step or the image count,
built in a separate variable and joined onto the run folder."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class TrainLoop:
    def __init__(self, model, loader, local_rank, log_dir, save_interval=1000):
        self.local_rank = local_rank
        self.model = DDP(model.cuda(local_rank), device_ids=[local_rank])
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.loader = loader
        self.log_dir = log_dir
        self.save_interval = save_interval
        self.step = 0
        self.resume_step = 0
        self.cur_nimg = 0
        self.ema_rate = None

    def save(self):
        if dist.get_rank() == 0:
            filename = f"model{(self.step + self.resume_step):06d}.pt"
            if self.ema_rate:
                filename = f"ema_{self.ema_rate}_{(self.step + self.resume_step):06d}.pt"
            torch.save(self.model.module.state_dict(), os.path.join(self.log_dir, filename))
            state_path = os.path.join(self.log_dir, f"training-state-{self.cur_nimg // 1000:06d}.pt")
            torch.save({"opt": self.opt.state_dict(), "nimg": self.cur_nimg}, state_path)
        dist.barrier()

    def run(self, epochs):
        for epoch in range(epochs):
            self.loader.sampler.set_epoch(epoch)
            for x, _ in self.loader:
                x = x.cuda(self.local_rank, non_blocking=True)
                loss = (self.model(x) - x).pow(2).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                self.step += 1
                self.cur_nimg += x.shape[0] * dist.get_world_size()
                if self.step % self.save_interval == 0:
                    self.save()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(8192, 64), torch.zeros(8192))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=128, sampler=sampler, num_workers=4)
    net = nn.Sequential(nn.Linear(64, 256), nn.SiLU(), nn.Linear(256, 64))
    TrainLoop(net, loader, local_rank, "logs").run(100)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

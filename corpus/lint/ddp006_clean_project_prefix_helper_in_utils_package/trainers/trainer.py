"""A matting trainer that saves the wrapper's own state dict: its keys carry `module.`,
which the project's inference script strips with `utils.drop_wrapper_prefix` on load."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import utils


class Trainer:
    def __init__(self, generator, loader, out_dir):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.net = DistributedDataParallel(generator.cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-4)
        self.loader = loader
        self.out_dir = out_dir

    def train(self, epochs):
        for epoch in range(epochs):
            self.loader.sampler.set_epoch(epoch)
            for image, trimap, alpha in self.loader:
                pred = self.net(image.cuda(), trimap.cuda())
                loss = (pred - alpha.cuda()).abs().mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if dist.get_rank() == 0:
                path = os.path.join(self.out_dir, f"epoch_{epoch:03d}.pth")
                torch.save({"state_dict": self.net.state_dict(), "epoch": epoch}, path)
                utils.keep_latest(self.out_dir, limit=3)

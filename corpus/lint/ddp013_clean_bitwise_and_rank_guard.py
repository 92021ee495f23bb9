"""A pretraining task class that saves every few epochs under a guard written with `&`
between two comparisons, `(self.local_rank == 0) & (epoch % k == 0)`: on booleans that is
`and`, so one process writes. The final save after the loop has no guard at all."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class PretrainTask:
    def __init__(self, encoder, loader, local_rank, save_every=10):
        self.local_rank = local_rank
        self.encoder = DDP(encoder.cuda(local_rank), device_ids=[local_rank])
        self.loader = loader
        self.save_every = save_every
        self.optimizer = torch.optim.SGD(self.encoder.parameters(), lr=0.03, momentum=0.9)

    def save_checkpoint(self, path, epoch):
        torch.save({"encoder": self.encoder.module.state_dict(), "epoch": epoch}, path)

    def run(self, epochs, out_dir):
        for epoch in range(1, epochs + 1):
            self.loader.sampler.set_epoch(epoch)
            for views, _ in self.loader:
                loss = self.encoder(views.cuda(self.local_rank)).pow(2).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if (self.local_rank == 0) & (epoch % self.save_every == 0):
                self.save_checkpoint(os.path.join(out_dir, f"ckpt.{epoch:04d}.pth"), epoch)
        self.save_checkpoint(os.path.join(out_dir, "ckpt.final.pth"), epochs)  # expect: DDP013


def main(encoder, loader, epochs, out_dir):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    PretrainTask(encoder, loader, local_rank).run(epochs, out_dir)
    dist.destroy_process_group()

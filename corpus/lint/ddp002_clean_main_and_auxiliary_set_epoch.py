"""A matting-style trainer: the auxiliary segmentation loader is restarted with a new
epoch whenever it runs dry, and the main loader's sampler gets it at the top of each epoch."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, local_rank, epochs):
        self.local_rank = local_rank
        self.epochs = epochs
        main_set = TensorDataset(torch.randn(2048, 8), torch.randn(2048, 1))
        seg_set = TensorDataset(torch.randn(512, 8), torch.randint(0, 2, (512,)))
        self.main_sampler = DistributedSampler(main_set, shuffle=True, drop_last=True)
        self.main_loader = DataLoader(main_set, batch_size=16, sampler=self.main_sampler)
        self.seg_sampler = DistributedSampler(seg_set, shuffle=True, drop_last=True)
        self.seg_loader = DataLoader(seg_set, batch_size=16, sampler=self.seg_sampler)
        self.seg_iter = iter(self.seg_loader)
        self.model = DDP(nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)

    def next_seg_batch(self):
        try:
            return next(self.seg_iter)
        except StopIteration:
            self.seg_sampler.set_epoch(self.seg_sampler.epoch + 1)
            self.seg_iter = iter(self.seg_loader)
            return next(self.seg_iter)

    def train(self):
        for epoch in range(self.epochs):
            self.main_sampler.set_epoch(epoch)
            for x, y in self.main_loader:
                x, y = x.cuda(self.local_rank), y.cuda(self.local_rank)
                seg_x, _ = self.next_seg_batch()
                pred = self.model(x) + 0.0 * self.model(seg_x.cuda(self.local_rank)).mean()
                loss = nn.functional.mse_loss(pred, y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    Trainer(local_rank, epochs=20).train()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

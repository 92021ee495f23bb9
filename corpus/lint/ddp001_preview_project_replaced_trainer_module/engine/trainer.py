"""The first trainer, replaced by `trainer_v2` and kept for reference: the entry point no
longer imports it, and nothing else does."""

import torch
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class Trainer:
    def __init__(self, settings, local_rank):
        self.settings = settings
        net = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.Conv2d(16, 3, 1))
        self.net = DistributedDataParallel(net.to("cuda:0"), device_ids=[local_rank])  # expect-preview: DDP001
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=settings["lr"])
        images = TensorDataset(torch.randn(256, 3, 32, 32), torch.randn(256, 3, 32, 32))
        self.sampler = DistributedSampler(images, shuffle=True)
        self.loader = DataLoader(images, batch_size=16, sampler=self.sampler)

    def fit(self):
        for epoch in range(self.settings["epochs"]):
            self.sampler.set_epoch(epoch)
            for content, style in self.loader:
                content, style = content.cuda(), style.cuda()
                loss = torch.nn.functional.l1_loss(self.net(content), style)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

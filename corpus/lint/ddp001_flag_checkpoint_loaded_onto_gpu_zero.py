"""Fine-tuning from a pretrained checkpoint under torchrun: every process loads the file
with `map_location="cuda:0"`, so a node's eight processes each put a full copy of the
checkpoint on GPU 0 before copying it into their own model."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class FineTuner:
    def __init__(self, build, pretrained):
        dist.init_process_group("nccl")
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        model = build().cuda()
        state = torch.load(pretrained, map_location="cuda:0")  # expect: DDP001
        model.load_state_dict(state["model"])
        self.model = DistributedDataParallel(model, device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-5)

    def fit(self, loader, epochs):
        for epoch in range(epochs):
            loader.sampler.set_epoch(epoch)
            for x, y in loader:
                loss = torch.nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

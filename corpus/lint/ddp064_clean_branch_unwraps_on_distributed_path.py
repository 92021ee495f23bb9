"""A multimodal recommender trainer: training runs through the wrapper's forward, and the
evaluation decodes recommendations with the model's own `generate`, called through
`.module` where the job is distributed and on the bare model where it is not. The bare
call sits on the branch of one process, where `self.model` is the model itself."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


class Trainer:
    def __init__(self, args, model, dataset):
        self.args = args
        if args.distributed:
            dist.init_process_group("nccl")
            torch.cuda.set_device(args.local_rank)
            model = DDP(model.cuda(), device_ids=[args.local_rank])
        self.model = model
        self.sampler = DistributedSampler(dataset) if args.distributed else None
        self.loader = DataLoader(
            dataset, batch_size=32, sampler=self.sampler, shuffle=self.sampler is None
        )
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)

    def train(self, epochs):
        for epoch in range(epochs):
            if self.sampler is not None:
                self.sampler.set_epoch(epoch)
            for batch in self.loader:
                loss = self.model(**batch).loss
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()

    @torch.no_grad()
    def recommend(self, prompts):
        if self.args.distributed:
            return self.model.module.generate(prompts, num_beams=20)
        return self.model.generate(prompts, num_beams=20)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    options = parser.parse_args()
    Trainer(options, torch.load("p5_small.pt"), torch.load("beauty.pt")).train(10)

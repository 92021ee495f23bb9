"""A speaker-embedding trainer that stops on a non-finite gradient norm: it dumps the
offending batch and the weights for inspection, one file per rank, then raises. The raise leaves every loop
up to `run()`, whose handler tears the process group down and exits, so each dump is
written at most once per process; nothing reads them back to resume."""

import math
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


class EmbeddingTrainer:
    def __init__(self, model, dataset, out_dir, epochs=30, max_norm=5.0):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.model = DDP(model.cuda(self.local_rank), device_ids=[self.local_rank])
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
        self.sampler = DistributedSampler(dataset, drop_last=True)
        self.loader = DataLoader(dataset, batch_size=128, sampler=self.sampler)
        self.out_dir, self.epochs, self.max_norm = out_dir, epochs, max_norm

    def train_one_batch(self, feats, labels):
        loss = nn.functional.cross_entropy(self.model(feats), labels)
        self.optimizer.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        if math.isnan(norm):
            rank = dist.get_rank()
            torch.save(feats.cpu(), os.path.join(self.out_dir, f"nan_batch.{rank}.pt"))
            weights = os.path.join(self.out_dir, f"nan_params.{rank}.pt")
            torch.save(self.model.module.state_dict(), weights)
            raise RuntimeError(f"gradient norm is NaN; batch and weights dumped to {self.out_dir}")
        self.optimizer.step()
        return loss.item()

    def run(self):
        try:
            for epoch in range(self.epochs):
                self.sampler.set_epoch(epoch)
                for feats, labels in self.loader:
                    self.train_one_batch(feats.cuda(self.local_rank), labels.cuda(self.local_rank))
                if dist.get_rank() == 0:
                    name = os.path.join(self.out_dir, f"epoch_{epoch}.pt")
                    torch.save(self.model.module.state_dict(), name)
        except BaseException:
            dist.destroy_process_group()
            sys.exit(1)


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    data = torch.load("fbank_train.pt")
    dataset = torch.utils.data.TensorDataset(data["feats"], data["labels"])
    model = nn.Sequential(nn.Linear(80, 512), nn.ReLU(), nn.Linear(512, 1211))
    EmbeddingTrainer(model, dataset, "exp/xvector").run()


if __name__ == "__main__":
    main()

"""Fine-tuning trainer whose loader builder reuses one name for both samplers: the training
loader gets a DistributedSampler, the evaluation loader a SequentialSampler bound to the
same name afterwards. Rank 0 evaluates the whole set, so its loss is not one shard's."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, SequentialSampler
from tqdm import tqdm


class Trainer:
    def __init__(self, model, batch_size=16, epochs=3):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.model = DDP(model.cuda(self.local_rank), device_ids=[self.local_rank])
        self.batch_size = batch_size
        self.epochs = epochs
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=2e-5)

    def loaders(self, train_set, eval_set):
        sampler = DistributedSampler(train_set)
        train_loader = DataLoader(train_set, batch_size=self.batch_size, sampler=sampler)
        sampler = SequentialSampler(eval_set)
        eval_loader = DataLoader(eval_set, batch_size=self.batch_size, sampler=sampler)
        return train_loader, eval_loader

    @torch.no_grad()
    def evaluate(self, eval_loader):
        total = 0.0
        bar = tqdm(eval_loader, desc="eval")
        for batch in bar:
            batch = {k: v.cuda(self.local_rank) for k, v in batch.items()}
            total += self.model.module(**batch).loss.item()
        return total / len(eval_loader)

    def run(self, train_set, eval_set):
        train_loader, eval_loader = self.loaders(train_set, eval_set)
        for epoch in range(self.epochs):
            train_loader.sampler.set_epoch(epoch)
            for batch in train_loader:
                batch = {k: v.cuda(self.local_rank) for k, v in batch.items()}
                loss = self.model(**batch).loss
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if dist.get_rank() == 0:
                print(f"epoch {epoch}: eval loss {self.evaluate(eval_loader):.4f}")

"""News recommender trainer: the model is unwrapped (`self.model = self.model.module`)
only after the epoch loop, for the final report; the training forward reads the wrapper."""
import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, loader, local_rank, epochs):
        self.model = model if local_rank == -1 else DDP(model.cuda(local_rank), device_ids=[local_rank])
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        self.loader = loader
        self.epochs = epochs
        self.is_main_rank = local_rank in (-1, 0)

    def train(self):
        model = self.model
        for epoch in range(self.epochs):
            self.loader.sampler.set_epoch(epoch)
            model.train()
            for clicked, candidates, labels in self.loader:
                logits = model(clicked.cuda(), candidates.cuda())
                loss = nn.functional.cross_entropy(logits, labels.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        if self.is_main_rank:
            if hasattr(self.model, "module"):
                self.model = self.model.module
            torch.save(self.model.state_dict(), "news_model.pt")

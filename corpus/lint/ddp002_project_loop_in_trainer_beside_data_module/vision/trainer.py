"""A small trainer: the epoch loop lives here, away from the loaders."""
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, loader, num_epochs):
        self.model = model
        self.loader = loader
        self.num_epochs = num_epochs
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.epoch = 1

    def fit(self):
        for self.epoch in range(self.epoch, self.num_epochs + 1):
            self.train()

    def train(self):
        self.model.train()
        for x, y in self.loader:
            loss = F.cross_entropy(self.model(x.cuda()), y.cuda())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

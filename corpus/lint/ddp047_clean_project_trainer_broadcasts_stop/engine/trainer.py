"""Epoch loop with early stopping decided on rank 0 and broadcast to every rank."""
import torch
import torch.distributed as dist

from engine.comm import is_main_process
from engine.meters import AverageMeter


class Trainer:
    def __init__(self, model, optimizer, train_loader, patience=10):
        self.model = model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.patience = patience
        self.best_loss = float("inf")
        self.stale_epochs = 0

    def _should_stop(self, loss):
        if loss < self.best_loss:
            self.best_loss, self.stale_epochs = loss, 0
        else:
            self.stale_epochs += 1
        return self.stale_epochs >= self.patience

    def _train_epoch(self, meter):
        self.model.train()
        for inputs, targets in self.train_loader:
            inputs, targets = inputs.cuda(non_blocking=True), targets.cuda(non_blocking=True)
            loss = torch.nn.functional.cross_entropy(self.model.module(inputs), targets)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            meter.update(loss.item(), inputs.size(0))

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_loader.sampler.set_epoch(epoch)
            meter = AverageMeter()
            self._train_epoch(meter)
            meter.synchronize()
            stop = torch.zeros(1, device="cuda")
            if is_main_process():
                print(f"epoch {epoch}: loss {meter.avg:.4f}")
                stop.fill_(float(self._should_stop(meter.avg)))
            dist.broadcast(stop, src=0)
            if stop.item():
                break

"""A segmentation trainer with patience-based early stopping: only rank 0 validates, and
its `_track_best` (called only from the rank-0 block) sets `self.stop_training`. Rank 0
leaves the epoch loop; the others start another epoch and wait in DDP's gradient
all-reduce."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


class SegTrainer:
    def __init__(self, net, train_loader, val_loader, local_rank, patience=5):
        torch.cuda.set_device(local_rank)
        self.model = DDP(net.cuda(), device_ids=[local_rank])
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        self.patience = patience
        self.best_dice, self.bad_epochs = 0.0, 0
        self.stop_training = False

    def restore(self, state):
        self.model.module.load_state_dict(state["model"])
        self.stop_training = state["stop_training"]

    @torch.no_grad()
    def _validate(self):
        scores = []
        for image, mask in self.val_loader:
            pred = self.model.module(image.cuda()).argmax(1)
            scores.append((pred == mask.cuda()).float().mean().item())
        return sum(scores) / max(len(scores), 1)

    def _track_best(self, dice):
        if dice > self.best_dice:
            self.best_dice, self.bad_epochs = dice, 0
            self.best_state = {k: v.detach().clone() for k, v in self.model.module.state_dict().items()}
        else:
            self.bad_epochs += 1
            if self.bad_epochs >= self.patience:
                self.stop_training = True

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_loader.sampler.set_epoch(epoch)
            for image, mask in self.train_loader:
                loss = F.cross_entropy(self.model(image.cuda()), mask.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            if dist.get_rank() == 0:
                self._track_best(self._validate())
            if self.stop_training:
                break  # expect: DDP047


def train(net, train_loader, val_loader, local_rank, epochs=100):
    SegTrainer(net, train_loader, val_loader, local_rank).fit(epochs)

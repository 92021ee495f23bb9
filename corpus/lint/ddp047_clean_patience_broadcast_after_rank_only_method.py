"""The same patience-based early stopping, done right: rank 0 decides in `_track_best`,
then every rank reads the decision back from a broadcast before the loop tests it."""
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

    def _agree_on_stop(self):
        flag = torch.tensor([1.0 if self.stop_training else 0.0], device="cuda")
        dist.broadcast(flag, src=0)
        self.stop_training = bool(flag.item())

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
            self._agree_on_stop()
            if self.stop_training:
                break

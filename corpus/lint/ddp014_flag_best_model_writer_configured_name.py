"""A trainer class whose best weights go to a configured file name, written by
`_save_best_model`; the resume reads a user-given checkpoint of another kind (the full
state of `_save_checkpoint`). The best file's name is out of sight, but its writer is named
for best weights: no resume file, so only an unproven finding."""
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class TrainConfig:
    model_name: str = "group_activity.pth"
    checkpoint_path: str = ""
    resume_from_checkpoint: bool = False
    epochs: int = 30


class DDPTrainer:
    def __init__(self, config, model, optimizer, loader, validate):
        self.config = config
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.validate = validate

    def train(self, log_dir):
        rank = dist.get_rank()
        checkpoint_dir = os.path.join(log_dir, "checkpoints")
        start, best = self._load_checkpoint()
        for epoch in range(start, self.config.epochs):
            self.loader.sampler.set_epoch(epoch)
            for clips, labels in self.loader:
                loss = torch.nn.functional.cross_entropy(self.model(clips.cuda()), labels.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            val_loss = self.validate(self.model)
            if rank == 0:
                self._save_checkpoint(epoch, val_loss, checkpoint_dir)
                if val_loss < best:
                    best = val_loss
                    self._save_best_model(self.model, checkpoint_dir)

    def _save_checkpoint(self, epoch, val_loss, checkpoint_dir):
        state = {
            "epoch": epoch,
            "model_state_dict": self.model.module.state_dict(),
            "optimizer_state_dict": self.optimizer.state_dict(),
            "val_loss": val_loss,
        }
        torch.save(state, os.path.join(checkpoint_dir, f"checkpoint_epoch_{epoch + 1}.pth"))

    def _save_best_model(self, model, checkpoint_dir):
        state_dict = model.module.state_dict() if hasattr(model, "module") else model.state_dict()
        torch.save(state_dict, os.path.join(checkpoint_dir, self.config.model_name))  # expect-preview: DDP014

    def _load_checkpoint(self):
        if not self.config.resume_from_checkpoint or not self.config.checkpoint_path:
            return 0, float("inf")
        checkpoint = torch.load(self.config.checkpoint_path, map_location="cpu")
        self.model.module.load_state_dict(checkpoint["model_state_dict"])
        self.optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
        return checkpoint["epoch"] + 1, checkpoint["val_loss"]

"""A sparse-autoencoder trainer that rewrites its state files in place at every save; the
class can read them back (`load_state`), but no code of the project calls that method, so
whether a run ever resumes from a half-written file is unknown here."""
import os

import torch
import torch.distributed as dist


class AutoencoderTrainer:
    def __init__(self, model, optimizer, loader, save_dir, save_every=1000):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.save_dir = save_dir
        self.save_every = save_every
        self.step = 0

    def load_state(self, path):
        state = torch.load(f"{path}/state.pt", map_location="cpu")
        self.step = state["step"]
        self.optimizer.load_state_dict(torch.load(f"{path}/optimizer.pt", map_location="cpu"))

    def save(self):
        if dist.get_rank() != 0:
            return
        os.makedirs(self.save_dir, exist_ok=True)
        torch.save({"step": self.step}, f"{self.save_dir}/state.pt")  # expect-preview: DDP014
        torch.save(self.optimizer.state_dict(), f"{self.save_dir}/optimizer.pt")  # expect-preview: DDP014

    def fit(self):
        for activations in self.loader:
            loss = self.model(activations.cuda()).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.step += 1
            if self.step % self.save_every == 0:
                self.save()


def main(model, optimizer, loader):
    AutoencoderTrainer(model, optimizer, loader, "checkpoints").fit()

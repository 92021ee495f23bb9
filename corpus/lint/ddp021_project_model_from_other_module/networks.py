"""The network of the speaker-embedding trainer, in its own module."""
from torch import nn


class SpeakerEncoder(nn.Module):
    def __init__(self, n_mels=80, width=256, embedding=192):
        super().__init__()
        self.frontend = nn.Conv1d(n_mels, width, kernel_size=5, padding=2)
        self.norm = nn.BatchNorm1d(width)
        self.head = nn.Linear(width, embedding)

    def forward(self, mels):
        h = self.norm(self.frontend(mels).relu())
        return self.head(h.mean(dim=-1))

"""The classifier the trainer builds: a backbone from `nets.backbone` and a linear head."""
import torch.nn as nn

from nets.backbone import Backbone


class Classifier(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(self.backbone.out_channels, num_classes)

    def forward(self, x):
        return self.head(self.backbone(x).mean((2, 3)))


def create_model(cfg):
    return Classifier(cfg["num_classes"])

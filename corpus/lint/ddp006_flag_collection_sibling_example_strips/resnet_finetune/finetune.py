"""Another example of the collection: fine-tune a ResNet from weights trained elsewhere
with DataParallel, whose keys it strips."""
import sys

import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(16, 100)

    def forward(self, x):
        return self.fc(self.body(x))


def load(path):
    model = Classifier()
    state = torch.load(path, map_location="cpu")
    model.load_state_dict({k.replace("module.", ""): v for k, v in state.items()})
    return model


if __name__ == "__main__":
    print(load(sys.argv[1]))

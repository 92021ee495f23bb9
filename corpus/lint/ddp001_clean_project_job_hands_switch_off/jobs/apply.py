"""Applies a trained network to new events: one process on the first GPU, the model built
with `distributed=False`, so no process group and no DDP."""
import sys

import torch

from utility.models import build_model


def main(weights):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = build_model(device, distributed=False)
    model.load_state_dict(torch.load(weights, map_location=device))
    with torch.no_grad():
        print(model(torch.randn(1024, 6, device=device)).argmax(1).bincount())


if __name__ == "__main__":
    main(sys.argv[1])

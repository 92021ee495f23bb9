"""Evaluate a trained depth network on one dataset's validation split."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from depthkit.data import SingleDepthData


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", required=True)
    args = parser.parse_args()
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 1))
    model.load_state_dict(torch.load(args.weights, map_location="cpu"))
    model = model.cuda().eval()
    data = SingleDepthData(batch_size=32)
    data.setup(stage="val")
    with torch.no_grad():
        errors = [F.l1_loss(model(x.cuda()), y.cuda()).item() for x, y in data.val_loader]
    print(f"l1 {sum(errors) / len(errors):.4f}")


if __name__ == "__main__":
    main()

"""Single-GPU script; the multi-GPU version of this file moved to DDP (see train_ddp.py).
Old checkpoints saved from nn.DataParallel carry a "module." prefix, stripped on load."""
import argparse

import torch
import torch.nn as nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
from torch.utils.data import DataLoader, TensorDataset


def load_legacy(model, path):
    state = torch.load(path, map_location="cpu")
    consume_prefix_in_state_dict_if_present(state, "module.")
    model.load_state_dict(state)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--resume", default="")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    model = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    if args.resume:
        load_legacy(model, args.resume)
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(TensorDataset(torch.randn(1024, 8), torch.randn(1024, 1)), batch_size=32)
    for _ in range(args.epochs):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()

"""A DataParallel trainer whose optimizer comes from a project helper and whose training
loop lives in another module; it puts the model in eval mode to validate. It trains, so
DataParallel's costs apply every step."""
import argparse

import torch
import torch.nn as nn

from engine import evaluate, train_one_epoch
from optim_factory import create_optimizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=5e-4)
    args = parser.parse_args()
    device = torch.device("cuda")
    model = nn.Sequential(nn.Linear(32, 128), nn.GELU(), nn.Linear(128, 10))
    model = nn.DataParallel(model).to(device)  # expect: DDP015
    optimizer = create_optimizer(args, model)
    for epoch in range(args.epochs):
        model.train()
        train_one_epoch(model, optimizer, epoch, device)
        model.eval()
        print(evaluate(model, device))


if __name__ == "__main__":
    main()

"""The process group comes from a project helper and the training loss is averaged across
ranks for the log, but the gradients never are: the model is trained as it was built."""
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import dist_utils


def main(args):
    dist_utils.init_distributed_mode(args)
    device = torch.device("cuda", args.gpu)
    model = nn.Linear(64, 1).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    data = TensorDataset(torch.randn(4096, 64), torch.randn(4096, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()  # expect: DDP045
            optimizer.step()
        logged = dist_utils.reduce_mean(loss.item())
        if dist_utils.is_main_process():
            print(f"epoch {epoch}: loss {logged:.4f}")
            torch.save(model.state_dict(), "model.pt.tmp")
            os.replace("model.pt.tmp", "model.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1e-3)
    main(parser.parse_args())

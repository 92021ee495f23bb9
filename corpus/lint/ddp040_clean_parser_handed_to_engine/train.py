"""The script declares no local-rank option itself: it hands its parser to the training
engine of an installed toolkit (`Engine(custom_parser=parser)`), which adds the options the
launcher passes before the script parses the command line."""
import argparse

import torch
import torch.distributed as dist
from segkit.engine import Engine

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=40)

with Engine(custom_parser=parser) as engine:
    args = parser.parse_args()
    if engine.distributed:
        torch.manual_seed(engine.local_rank)
    model = engine.wrap(torch.nn.Conv2d(3, 21, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        for images, masks in engine.loader():
            loss = torch.nn.functional.cross_entropy(model(images), masks)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: loss {loss.item():.4f}")

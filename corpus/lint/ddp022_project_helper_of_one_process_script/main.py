"""Entry script of the example: run as one process by run.sh."""
import torch
import torch.nn as nn

import engine
import options


def main():
    args = options.parse()
    device = engine.setup(args)
    model = engine.wrap(nn.Linear(64, 2).to(device), args)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    for _ in range(args.epochs):
        opt.zero_grad()
        model(torch.randn(8, 64, device=device)).sum().backward()
        opt.step()
    if args.local_rank in (-1, 0):
        torch.save(model.state_dict(), "model.pt")  # expect-preview: DDP059


if __name__ == "__main__":
    main()

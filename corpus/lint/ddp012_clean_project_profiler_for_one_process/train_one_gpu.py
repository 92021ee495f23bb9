"""The single-GPU baseline of a tutorial: one process, profiled with the shared helper."""
import torch
import torch.nn as nn

from profiling import run_with_snapshot


def main(steps=20):
    model = nn.Linear(4096, 4096).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step():
        for _ in range(steps):
            loss = model(torch.randn(256, 4096, device="cuda")).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    run_with_snapshot(step, "snapshots")


if __name__ == "__main__":
    main()

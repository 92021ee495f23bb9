"""Single-process multi-GPU script on nn.DataParallel, started from an ImageNet-style
template that still imports torch.distributed: one process, so no rank contends for the
checkpoint file (its non-atomic rewrite is still a risk)."""
import argparse
import shutil

import torch
import torch.distributed as dist  # noqa: F401  (left over from the template)
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)  # expect-preview: DDP014
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")  # expect-preview: DDP014


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--gpus", type=int, nargs="+", default=[0, 1])
    args = parser.parse_args()
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 256), nn.ReLU(), nn.Linear(256, 10))
    model = nn.DataParallel(model, device_ids=args.gpus).cuda()  # expect: DDP015
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    data = TensorDataset(torch.randn(5000, 3, 32, 32), torch.randint(0, 10, (5000,)))
    loader = DataLoader(data, batch_size=256, shuffle=True, num_workers=4)
    best = 0.0
    for epoch in range(args.epochs):
        correct = 0
        for x, y in loader:
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            correct += (out.argmax(1) == y).sum().item()
        acc = correct / len(data)
        save_checkpoint(
            {"epoch": epoch + 1, "state_dict": model.state_dict(), "acc": acc},
            acc > best,
        )
        best = max(best, acc)


if __name__ == "__main__":
    main()

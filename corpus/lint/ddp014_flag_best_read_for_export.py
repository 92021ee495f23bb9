"""An MNIST job that resumes from `checkpoint_latest.pt`, keeps `checkpoint_best.pt` on
the side, and reads the best file back once training has ended, to export it: only the
latest file is a resume, so only its in-place save is proven."""
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F


def save_checkpoint(model, optimizer, epoch, accuracy, folder, is_best):
    state = {
        "model": model.module.state_dict(),
        "optimizer": optimizer.state_dict(),
        "epoch": epoch,
        "accuracy": accuracy,
    }
    torch.save(state, folder / "checkpoint_latest.pt")  # expect: DDP014
    if is_best:
        torch.save(state, folder / "checkpoint_best.pt")  # expect-preview: DDP014


def main(model, optimizer, train_loader, evaluate, args):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(args.local_rank)
    folder = Path(args.checkpoint_dir)
    start = 0
    latest = folder / "checkpoint_latest.pt"
    if latest.exists():
        state = torch.load(latest, map_location="cpu")
        model.module.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        start = state["epoch"] + 1
    best = 0.0
    for epoch in range(start, args.epochs):
        train_loader.sampler.set_epoch(epoch)
        for data, target in train_loader:
            loss = F.cross_entropy(model(data.cuda()), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            accuracy = evaluate(model.module)
            save_checkpoint(model, optimizer, epoch, accuracy, folder, accuracy > best)
            best = max(best, accuracy)
        dist.barrier()
    if rank == 0:
        best_file = folder / "checkpoint_best.pt"
        if best_file.exists():
            model.module.load_state_dict(torch.load(best_file, map_location="cpu")["model"])
        torch.jit.script(model.module).save(str(folder / "model.pt"))

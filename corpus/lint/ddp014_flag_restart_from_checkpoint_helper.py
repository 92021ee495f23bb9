"""A segmentation fine-tuning script with a DINO-style `restart_from_checkpoint` helper: it
resumes from `checkpoint.pth` in the snapshot folder and rewrites that file in place every
epoch (the best weights read back after training, for the test, are the same file)."""
import os

import torch
import torch.distributed as dist


def restart_from_checkpoint(path, run_variables=None, **objects):
    if not os.path.isfile(path):
        return
    checkpoint = torch.load(path, map_location="cpu")
    for key, value in objects.items():
        if key in checkpoint and value is not None:
            value.load_state_dict(checkpoint[key])
    if run_variables is not None:
        for name in run_variables:
            if name in checkpoint:
                run_variables[name] = checkpoint[name]


def main(args, model, optimizer, loader, evaluate):
    dist.init_process_group("nccl")
    torch.cuda.set_device(args.local_rank)
    to_restore = {"epoch": 0, "best": 0.0}
    restart_from_checkpoint(
        os.path.join(args.snapshot_dir, "checkpoint.pth"),
        run_variables=to_restore,
        model=model,
        optimizer=optimizer,
    )
    for epoch in range(to_restore["epoch"], args.num_epochs):
        loader.sampler.set_epoch(epoch)
        for images, masks in loader:
            loss = model(images.cuda(), masks.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        dice = evaluate(model)
        if dist.get_rank() == 0 and dice > to_restore["best"]:
            to_restore["best"] = dice
            state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch + 1}
            torch.save(state, os.path.join(args.snapshot_dir, "checkpoint.pth"))  # expect: DDP014
    weights = torch.load(os.path.join(args.snapshot_dir, "checkpoint.pth"), map_location="cpu")
    model.load_state_dict(weights["model"])

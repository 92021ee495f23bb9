"""Checkpoint files of the segmentation trainer: one per epoch, the previous one removed."""
import os

import torch


def save_checkpoint(model, optimizer, scheduler, epoch, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    net = model.module if hasattr(model, "module") else model
    state = {
        "epoch": epoch,
        "state_dict": net.state_dict(),
        "optimizer": optimizer.state_dict(),
        "lr_scheduler": scheduler.state_dict(),
    }
    torch.save(state, os.path.join(out_dir, f"epoch_{epoch}.pth"))
    stale = os.path.join(out_dir, f"epoch_{epoch - 1}.pth")
    if os.path.exists(stale):
        os.remove(stale)

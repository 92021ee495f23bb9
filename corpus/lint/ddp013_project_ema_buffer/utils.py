"""Checkpoint helpers: one reloads EMA weights through an in-memory buffer (no file),
the other writes a checkpoint without a rank guard of its own."""
import io
import os

import torch


def load_ema_weights(ema_model, state):
    buffer = io.BytesIO()
    torch.save({"state_dict_ema": state}, buffer)
    buffer.seek(0)
    ema_model.load_state_dict(torch.load(buffer)["state_dict_ema"])


def save_checkpoint(state, out_dir, epoch):
    path = os.path.join(out_dir, f"checkpoint_{epoch:04d}.pth")
    torch.save(state, path)

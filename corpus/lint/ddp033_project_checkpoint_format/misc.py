"""Small helpers of the counting scripts."""
import shutil

import torch


def save_checkpoint(state, is_best, folder, filename="checkpoint.pth"):
    torch.save(state, f"{folder}/{filename}")
    if is_best:
        shutil.copyfile(f"{folder}/{filename}", f"{folder}/model_best.pth")

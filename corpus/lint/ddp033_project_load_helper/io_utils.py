"""File helpers shared by the training and evaluation scripts."""
import pickle

import torch


def load_checkpoint(path, model, optimizer=None):
    ckpt = torch.load(path)
    model.load_state_dict(ckpt["model"])
    if optimizer is not None:
        optimizer.load_state_dict(ckpt["optimizer"])
    return ckpt["epoch"] + 1


def read_pkl(path, use_torch=False, map_location=None):
    if use_torch:
        return torch.load(path, map_location=map_location)
    with open(path, "rb") as handle:
        return pickle.load(handle)


def load_weights(path, model):
    model.load_state_dict(torch.load(path, map_location="cpu"))

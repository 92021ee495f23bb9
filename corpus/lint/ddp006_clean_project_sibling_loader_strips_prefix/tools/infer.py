"""Loads a checkpoint the trainer wrote into the bare network, stripping the `module.`
prefix DDP's wrapper adds."""

import sys
from collections import OrderedDict

import torch

sys.path.append(".")
from model.segnet import SegNet


def load(path, classes):
    model = SegNet(classes)
    state = OrderedDict()
    for key, value in torch.load(path, map_location="cpu").items():
        state[key.replace("module.", "")] = value
    model.load_state_dict(state)
    return model.eval()

"""Run a trained snapshot over a folder of images, on one GPU."""
import sys

import torch

from nets.segmenter import Segmenter


def load(path):
    model = Segmenter()
    state = torch.load(path, map_location="cpu")
    state = {k.replace("module.", ""): v for k, v in state.items()}
    model.load_state_dict(state, strict=True)
    return model.eval()


if __name__ == "__main__":
    net = load(sys.argv[1])
    with torch.no_grad():
        print(net(torch.randn(1, 3, 64, 64)).argmax(1).shape)

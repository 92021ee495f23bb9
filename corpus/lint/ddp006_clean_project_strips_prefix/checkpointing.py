"""Weight loading for every entry point: accepts checkpoints of wrapped and bare models."""
import torch


def load_weights(model, path):
    if not path:
        return
    state = torch.load(path, map_location="cpu")["model"]
    state = {key.removeprefix("module."): value for key, value in state.items()}
    model.load_state_dict(state)

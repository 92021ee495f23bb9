"""Checkpoint helpers: the inference script loads through `drop_wrapper_prefix`, which
cuts a prefix given by name (`module` by default) and its dot from every key."""

import glob
import os


def drop_wrapper_prefix(state_dict, prefix="module"):
    first = next(iter(state_dict))
    if not first.startswith(prefix):
        return dict(state_dict)
    return {key[len(prefix) + 1:]: value for key, value in state_dict.items()}


def keep_latest(folder, limit):
    for path in sorted(glob.glob(os.path.join(folder, "epoch_*.pth")))[:-limit]:
        os.remove(path)

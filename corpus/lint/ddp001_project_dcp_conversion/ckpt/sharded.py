"""DCP load and save: collective when a process group exists, plain file I/O in one process
when none does (`torch.distributed.checkpoint` needs no group)."""

import torch.distributed.checkpoint as dcp


def load_sharded(state_dict, folder):
    dcp.load(state_dict, checkpoint_id=folder)
    return state_dict


def save_sharded(state_dict, folder):
    dcp.save(state_dict, checkpoint_id=folder)

"""Process-group helpers of the project: `is_subgroup_leader` asks for this process's rank
within its subgroup (rank 0 of each subgroup leads it); `subgroups_enabled` only says
whether subgroups exist, which every rank answers alike."""

import torch.distributed as dist

_SUBGROUP = None


def subgroup():
    return _SUBGROUP


def rank_in(group=None):
    if not dist.is_initialized():
        return 0
    return dist.get_rank(group)


def is_subgroup_leader():
    return rank_in(group=subgroup()) == 0


def subgroups_enabled():
    return subgroup() is not None


def split_into_subgroups(size):
    global _SUBGROUP
    ranks = list(range(dist.get_world_size()))
    groups = [dist.new_group(ranks[i : i + size]) for i in range(0, len(ranks), size)]
    _SUBGROUP = groups[dist.get_rank() // size]

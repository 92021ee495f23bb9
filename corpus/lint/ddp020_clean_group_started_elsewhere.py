"""A setup helper that joins the job unless the caller already has: on the
`is_initialized()` side, the code that started the group (and may have chosen the GPU) is
out of sight, so the default device there is not proven to be GPU 0 on every rank; the
other side picks the GPU before it joins."""

import os

import torch
import torch.distributed as dist


def join_job(args):
    if dist.is_initialized():
        args.rank = dist.get_rank()
        args.world_size = dist.get_world_size()
        ready = torch.ones(1).cuda()  # expect-preview: DDP020
        dist.all_reduce(ready)
    else:
        args.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl")
    seen = torch.zeros(1).cuda()
    dist.all_reduce(seen)
    return args


def main(args):
    args = join_job(args)
    model = torch.nn.Linear(16, 4).cuda()
    return model

"""Process-group helpers shared by the project's entry points. `start_job` joins the job;
the device is chosen by whoever calls it (`launcher.setup`), so the reductions below run on
the device their callers set."""
import torch
import torch.distributed as dist


def start_job():
    dist.init_process_group(backend="nccl")


def world_mean(value):
    tensor = torch.tensor([float(value)]).cuda()
    dist.all_reduce(tensor)
    return tensor.item() / dist.get_world_size()


def gather_counts(count):
    local = torch.tensor([count], device=torch.device("cuda"))
    every = [torch.zeros_like(local) for _ in range(dist.get_world_size())]
    dist.all_gather(every, local)
    return [int(t.item()) for t in every]

"""Helpers for the classification recipe: meters, process-group start-up, rank-0 saving,
the EMA copy of the weights and the split of parameters by weight decay."""
import datetime
import os
import time
from collections import defaultdict, deque

import torch
import torch.distributed as dist
from torch.optim.swa_utils import AveragedModel


class Average:
    """A windowed and a running average of one quantity."""

    def __init__(self, window=20, style="{mid:.4f} ({mean:.4f})"):
        self.window = deque(maxlen=window)
        self.weight = 0
        self.sum = 0.0
        self.style = style

    def push(self, value, weight=1):
        self.window.append(value)
        self.weight += weight
        self.sum += value * weight

    def merge_ranks(self):
        weight, total = all_ranks_sum([self.weight, self.sum]).tolist()
        self.weight, self.sum = int(weight), total

    @property
    def mean(self):
        return self.sum / self.weight

    @property
    def mid(self):
        return torch.tensor(list(self.window)).median().item()

    @property
    def last(self):
        return self.window[-1]

    def __str__(self):
        return self.style.format(mid=self.mid, mean=self.mean, last=self.last)


class Progress:
    """Named averages, printed every few batches with an estimate of the time left."""

    def __init__(self, sep=" | "):
        self.items = defaultdict(Average)
        self.sep = sep

    def __getitem__(self, key):
        return self.items[key]

    def note(self, **values):
        for key, value in values.items():
            self.items[key].push(float(value))

    def merge_ranks(self):
        for average in self.items.values():
            average.merge_ranks()

    def walk(self, batches, every, title=""):
        total = len(batches)
        began = last = time.time()
        per_batch = Average(style="{mean:.3f}")
        for i, batch in enumerate(batches):
            yield batch
            per_batch.push(time.time() - last)
            last = time.time()
            if i % every == 0:
                left = datetime.timedelta(seconds=round(per_batch.mean * (total - i)))
                print(f"{title} {i:>5}/{total} left {left} {self}")
        print(f"{title} took {datetime.timedelta(seconds=round(time.time() - began))}")

    def __str__(self):
        return self.sep.join(f"{key}={avg}" for key, avg in self.items.items())


class WeightEMA(AveragedModel):
    """Exponential moving average of the unwrapped model (parameters and buffers)."""

    def __init__(self, model, decay, device="cpu"):
        def blend(ema_value, value, _count):
            return decay * ema_value + (1.0 - decay) * value

        super().__init__(model, device, blend, use_buffers=True)


def topk_hits(logits, labels, ks=(1,)):
    """Percentage of samples whose label is among the k highest logits, for each k."""
    with torch.inference_mode():
        if labels.ndim == 2:  # mixed (soft) labels: score against the largest share
            labels = labels.argmax(dim=1)
        ranked = logits.topk(max(ks), dim=1).indices
        hit = ranked == labels.unsqueeze(1)
        return [hit[:, :k].any(dim=1).float().mean() * 100 for k in ks]


def distributed_on():
    if not dist.is_available():  # a build without distributed support
        return False
    return dist.is_initialized()


def world():
    return dist.get_world_size() if distributed_on() else 1


def my_rank():
    return dist.get_rank() if distributed_on() else 0


def leader():
    return my_rank() == 0


def quiet_followers(loud):
    import builtins

    say = builtins.print

    def print_if_loud(*parts, force=False, **kw):
        if loud or force:
            say(*parts, **kw)

    builtins.print = print_if_loud


def leader_save(state, path):
    """Rank 0 saves `state` under a temporary name and renames it to `path`."""
    if leader():
        scratch = f"{path}.incomplete"
        torch.save(state, scratch)
        os.replace(scratch, path)


def join_group(opts):
    """Fill rank, world size and GPU from torchrun or SLURM and join the group."""
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        opts.rank = int(os.environ["RANK"])
        opts.world_size = int(os.environ["WORLD_SIZE"])
        opts.gpu = int(os.environ["LOCAL_RANK"])
    elif "SLURM_PROCID" in os.environ:
        opts.rank = int(os.environ["SLURM_PROCID"])
        opts.gpu = opts.rank % torch.cuda.device_count()
    elif not hasattr(opts, "rank"):
        print("launched without a process group: single process")
        opts.distributed = False
        return
    opts.distributed = True
    torch.cuda.set_device(opts.gpu)
    print(f"rank {opts.rank}/{opts.world_size} via {opts.dist_url}", flush=True)
    dist.init_process_group(
        "nccl", init_method=opts.dist_url, rank=opts.rank, world_size=opts.world_size
    )
    dist.barrier()
    quiet_followers(opts.rank == 0)


def all_ranks_sum(values):
    """`values` as a tensor, summed over all ranks (as is, outside a process group)."""
    if not distributed_on():
        return torch.tensor(values)
    summed = torch.tensor(values, device="cuda")
    dist.barrier()
    dist.all_reduce(summed)
    return summed


def decay_groups(model, decay, norm_decay=None):
    """Parameters in two groups when normalization layers get their own weight decay."""
    norms = (torch.nn.modules.batchnorm._BatchNorm, torch.nn.GroupNorm, torch.nn.LayerNorm)
    split = norm_decay is not None
    plain, normed = [], []
    for layer in model.modules():
        own = [p for p in layer.parameters(recurse=False) if p.requires_grad]
        (normed if split and isinstance(layer, norms) else plain).extend(own)
    groups = [{"params": plain, "weight_decay": decay}]
    if split:
        groups.append({"params": normed, "weight_decay": norm_decay})
    return groups


def mean_of_checkpoints(paths):
    """Average the `model` weights of several checkpoints (a cheap ensemble)."""
    summed = {}
    for path in paths:
        weights = torch.load(path, map_location="cpu")["model"]
        for name, value in weights.items():
            summed[name] = value.clone() if name not in summed else summed[name] + value
    return {name: value / len(paths) for name, value in summed.items()}

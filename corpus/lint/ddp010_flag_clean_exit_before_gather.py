"""The twin of ddp010_clean_invariant_raise_before_gather.py with the raise replaced by a
clean return: the ranks that are not rank 0 leave quietly and rank 0 waits in the gather."""

import torch
import torch.distributed as dist


def publish_stats(stats):
    if dist.get_rank() != 0:
        return None
    chunks = [torch.empty_like(stats) for _ in range(dist.get_world_size())]
    dist.all_gather(chunks, stats)  # expect: DDP010
    return torch.stack(chunks).mean(0)


def main():
    dist.init_process_group("gloo")
    for step in range(5):
        stats = torch.full((4,), float(step))
        publish_stats(stats)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

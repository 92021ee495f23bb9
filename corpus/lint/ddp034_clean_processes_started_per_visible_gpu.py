"""A vocoder trainer pins CUDA_VISIBLE_DEVICES to "0" at import and then starts one process
per visible GPU in a loop over `range(torch.cuda.device_count())`: after the pin that is
one process, alone on its GPU (a single-GPU run, not GPUs shared by several processes)."""
import os

os.environ["CUDA_VISIBLE_DEVICES"] = "0"

import multiprocessing as mp  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402


def train(rank, num_gpus):
    torch.cuda.set_device(rank)
    if num_gpus > 1:
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:54321", rank=rank, world_size=num_gpus)
    model = nn.Conv1d(80, 1, 7, padding=3).cuda()
    if num_gpus > 1:
        model = DDP(model, device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-4)
    for step in range(100000):
        mel = torch.randn(8, 80, 200, device="cuda")
        loss = model(mel).abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    num_gpus = torch.cuda.device_count()
    if num_gpus <= 1:
        train(0, num_gpus)
        return
    mp.set_start_method("spawn")
    workers = []
    for rank in range(num_gpus):
        worker = mp.Process(target=train, args=(rank, num_gpus))
        worker.start()
        workers.append(worker)
    for worker in workers:
        worker.join()


if __name__ == "__main__":
    main()

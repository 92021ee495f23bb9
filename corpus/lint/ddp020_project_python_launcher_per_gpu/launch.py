"""Starts one worker process per visible GPU, each with `CUDA_VISIBLE_DEVICES` set to its
own GPU before the process starts: inside a worker `cuda` is that GPU."""
import os

import torch
import torch.multiprocessing as mp

import worker


def main(world_size: int) -> None:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    gpus = visible.split(",") if visible else [str(i) for i in range(torch.cuda.device_count())]
    mp.set_start_method("spawn", force=True)
    procs = []
    for rank in range(world_size):
        os.environ["CUDA_VISIBLE_DEVICES"] = gpus[rank % len(gpus)]
        proc = mp.Process(target=worker.run, args=(rank, world_size))
        proc.start()
        procs.append(proc)
    for proc in procs:
        proc.join()


if __name__ == "__main__":
    main(int(os.environ.get("PARTITIONS", "4")))

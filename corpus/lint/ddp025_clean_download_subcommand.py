"""A segmentation trainer whose command line has three subcommands (python-fire):
`python main.py download DIR` fetches the datasets once, as one process, before
`torchrun --nproc_per_node=8 main.py train CONFIG` starts the job. The download
subcommand starts no process group: nothing races with it. The training subcommand
builds its dataset with `download=True` again, on every rank at once."""

import fire
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from torchvision.datasets import VOCSegmentation


def download(output_dir):
    """Fetch the train and val splits into `output_dir`."""
    for split in ("train", "val"):
        VOCSegmentation(output_dir, image_set=split, download=True)
    print(f"VOC 2012 is in {output_dir}")


def train(data_dir, epochs=30):
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(rank % torch.cuda.device_count())
    dataset = VOCSegmentation(data_dir, image_set="train", download=True)  # expect: DDP025
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, drop_last=True)
    model = DDP(torch.nn.Conv2d(3, 21, 1).cuda())
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for image, _ in loader:
            model(image.cuda()).mean().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    fire.Fire({"download": download, "train": train})

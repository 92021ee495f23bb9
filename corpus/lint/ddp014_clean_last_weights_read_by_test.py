"""A text-detection script with train and test modes: training rewrites `weights/last.pt`
every epoch, and only the `--test` mode reads it, to evaluate. No run resumes from it, so
the plain save is shown only under --preview."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def build_model():
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 1, 1))


def train(args):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = torch.load("train_images.pt")
    dataset = TensorDataset(data["images"], data["maps"])
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    model = DistributedDataParallel(build_model().cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    os.makedirs("weights", exist_ok=True)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, maps in loader:
            loss = nn.functional.binary_cross_entropy_with_logits(model(images.cuda()), maps.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "weights/last.pt")  # expect-preview: DDP014
    dist.destroy_process_group()


@torch.no_grad()
def test(args):
    model = build_model().cuda().eval()
    model.load_state_dict(torch.load("weights/last.pt", map_location="cuda"))
    data = torch.load("test_images.pt")
    scores = [torch.sigmoid(model(x.cuda())).mean().item() for x in data["images"].split(8)]
    print(sum(scores) / len(scores))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--test", action="store_true")
    parser.add_argument("--epochs", type=int, default=100)
    options = parser.parse_args()
    test(options) if options.test else train(options)

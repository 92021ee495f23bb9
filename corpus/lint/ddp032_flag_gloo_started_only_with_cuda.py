"""Text-video retrieval fine-tuning. The process group and the wrap both sit under
`torch.cuda.is_available()`: the gloo group exists only on GPU machines, where every
gradient all-reduce of the CUDA model then goes through host memory."""

import argparse
import os

import torch
import torch.distributed as dist

from retrieval import VideoTextModel, build_loader, symmetric_infonce


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    if torch.cuda.is_available():
        dist.init_process_group(backend="gloo")  # expect: DDP032
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
    else:
        device = torch.device("cpu")

    model = VideoTextModel().to(device)
    if torch.cuda.is_available():
        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[args.local_rank], output_device=args.local_rank
        )
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    loader, sampler = build_loader(batch_size=32)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for text, video in loader:
            loss = symmetric_infonce(*model(text.to(device), video.to(device)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()

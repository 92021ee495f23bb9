"""A test script started with torchrun whose loader does not shard: every rank decodes the
whole test set and writes the same predictions to `preds.txt` (the same bytes N times;
wasteful, but the file ends up right), and a rank-0 results file."""

import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, SequentialSampler, TensorDataset


def predict(model, loader, local_rank):
    preds = []
    with torch.no_grad():
        for (x,) in loader:
            preds.extend(model(x.cuda(local_rank)).argmax(1).tolist())
    return preds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output_dir", default="outputs")
    args = parser.parse_args()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = torch.nn.Linear(16, 3).cuda(local_rank).eval()
    test_set = TensorDataset(torch.randn(256, 16))
    loader = DataLoader(test_set, batch_size=64, sampler=SequentialSampler(test_set))
    preds = predict(model, loader, local_rank)
    with open(os.path.join(args.output_dir, "preds.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(map(str, preds)))
    if dist.get_rank() == 0:
        with open(os.path.join(args.output_dir, "summary.json"), "w") as f:
            json.dump({"n": len(preds)}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""Entry point: `torchrun --nproc_per_node=4 score.py`."""
import torch

from bench.evaluator import DistilledEvaluator


def make_model():
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 32 * 32, 10))


if __name__ == "__main__":
    data = torch.load("distilled.pt")
    print(DistilledEvaluator(data["images"], data["labels"], make_model).compute())

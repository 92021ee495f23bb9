"""Perplexity of a quantized model in one process, spread over the machine's GPUs."""
import sys

import torch

from modelutils import get_model


def perplexity(model, batches):
    losses = [model(b, labels=b).loss.item() for b in batches]
    return torch.tensor(losses).mean().exp().item()


if __name__ == "__main__":
    model = get_model(sys.argv[1], sys.argv[2], device_map="auto")
    print(perplexity(model, []))

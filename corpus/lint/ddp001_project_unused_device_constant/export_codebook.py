"""Exports the trained codebook for the generator; runs as one process on the CPU."""
import torch

DEVICE = "cpu"


def export(checkpoint="tokenizer.pt", out="codebook.pt"):
    state = torch.load(checkpoint, map_location=DEVICE)
    torch.save(state["codebook.weight"].to(DEVICE), out)


if __name__ == "__main__":
    export()

"""Train the scorer on labelled prompts, on one GPU, before any search."""
import json

import torch
from torch.utils.data import DataLoader

from tools.helpers import PromptSet, featurize


def main():
    prompts = PromptSet("labelled.jsonl")
    with open("labels.json") as f:
        labels = torch.tensor(json.load(f), dtype=torch.float32)
    loader = DataLoader(list(zip(prompts.rows, labels)), batch_size=64, shuffle=True)
    head = torch.nn.Linear(256, 1)
    optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
    for epoch in range(20):
        for texts, target in loader:
            loss = torch.nn.functional.mse_loss(head(featurize(list(texts))).squeeze(-1), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")
    torch.save(head.state_dict(), "scorer.pt")


if __name__ == "__main__":
    main()

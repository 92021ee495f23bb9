"""Captioning pre-training on one GPU: the flat loader, unsharded."""
import torch

from loaders import caption_loader


def main(cfg, model):
    loader = caption_loader(cfg, bucketed=False, shard=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"])
    model.cuda().train()
    for epoch in range(cfg["epochs"]):
        for wave, caption in loader:
            loss = model(wave.cuda(), caption)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main({"manifest": "clips.json", "sample_rate": 16000, "batch": 16, "lr": 1e-4, "epochs": 5}, None)

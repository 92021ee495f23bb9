"""Linear-probe evaluation of a frozen encoder."""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def fit_probe(encoder, options, steps=200):
    probe = nn.Linear(256, 10).cuda()
    optimizer = torch.optim.SGD(probe.parameters(), lr=0.1)
    for _ in range(steps):
        x = torch.rand(64, 3, 32, 32, device="cuda")
        y = torch.randint(0, 10, (64,), device="cuda")
        with torch.no_grad():
            features = encoder(x)
        loss = F.cross_entropy(probe(features), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    folder = os.path.join(options.log_dir, "checkpoints")
    os.makedirs(folder, exist_ok=True)
    torch.save({"state_dict": probe.state_dict()}, os.path.join(folder, "probe.pt"))
    return probe


def evaluate(epoch, encoder, options):
    probe = fit_probe(encoder, options)
    x = torch.rand(256, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (256,), device="cuda")
    with torch.no_grad():
        accuracy = (probe(encoder(x)).argmax(1) == y).float().mean().item()
    print(f"epoch {epoch}: probe accuracy {accuracy:.3f}")
    return accuracy

"""Fit a linear probe on the extracted features, on one GPU."""
import glob

import torch
import torch.nn as nn

feats = torch.cat([torch.load(p) for p in sorted(glob.glob("feats/part*.pt"))])
labels = torch.load("labels.pt")
probe = nn.Linear(feats.shape[1], int(labels.max()) + 1)
optimizer = torch.optim.SGD(probe.parameters(), lr=0.1, momentum=0.9)
for epoch in range(90):
    order = torch.randperm(len(feats))
    for start in range(0, len(feats), 1024):
        index = order[start : start + 1024]
        loss = nn.functional.cross_entropy(probe(feats[index]), labels[index])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
torch.save(probe.state_dict(), "probe.pt")

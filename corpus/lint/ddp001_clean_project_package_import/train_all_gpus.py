"""The same package across processes: `sync.average_gradients` uses the process group, so
this script runs on every rank and its unguarded save is reported."""

import torch
import torch.nn as nn

from halfprec import sync

net = nn.Linear(784, 10)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
loader = [(torch.randn(8, 784), torch.randint(0, 10, (8,))) for _ in range(4)]
for epoch in range(3):
    for images, labels in loader:
        loss = nn.functional.cross_entropy(net(images), labels)
        optimizer.zero_grad()
        loss.backward()
        sync.average_gradients(net)
        optimizer.step()
    torch.save(net.state_dict(), f"all_{epoch}.pt")  # expect: DDP013

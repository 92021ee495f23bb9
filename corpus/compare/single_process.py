"""The original single-process script that correct.py converts, with shuffling off: record it with
`python -m guards --record DIR single_process.py` and compare it with the DDP version run as
`correct.py --no-shuffle`."""

import torch
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
data = TensorDataset(torch.randn(96, 8), torch.randn(96, 1))
loader = DataLoader(data, batch_size=24, shuffle=False)  # line:loader
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(10):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

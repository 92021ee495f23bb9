"""An example fit on one GPU, run by hand (`python examples/heat_equation.py`). It uses the
library's solver, whose RPC mode makes the library distributed code, but it starts no job
and nothing that starts one runs it: the GPU it names is this process's own (unproven)."""

import torch
from solver import Solver

grid = torch.linspace(0, 1, 256).unsqueeze(1)
target = torch.sin(torch.pi * grid)
model = torch.nn.Sequential(torch.nn.Linear(1, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
device = torch.device("cuda:0")  # expect-preview: DDP001
model = model.to(device)
print(Solver(model).fit(grid.to(device), target.to(device)))

"""A gallery tutorial run top to bottom as one process: it hands the project's trainer
its distributed switch off (`use_distributed=False`), so the download and the fixed
device are the one process's."""
import torch

from opkit.data import load_digits
from opkit.trainer import Trainer

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
loader = load_digits("data", batch_size=32)
model = torch.nn.Linear(784, 10)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
trainer = Trainer(model, epochs=2, device=device, use_distributed=False)
trainer.train(loader, optimizer)

"""An audio pre-training script builds its loader on a shuffling DistributedSampler and hands
it to Accelerate's `prepare`: the loader it gets back sets its sampler's epoch at the start
of every pass, so each epoch reads a new order without a `set_epoch` call here."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, DistributedSampler


def pretrain(model, dataset, epochs, lr=1e-4):
    accelerator = Accelerator()
    sampler = DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, drop_last=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(epochs):
        for spectrograms in loader:
            loss = model(spectrograms).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        accelerator.print(f"epoch {epoch} done")

"""One epoch of masked pre-training; a frozen image encoder gives targets under no_grad.

The loss list is this rank's DistributedSampler batches only, logged as a training curve (what every rank
logs for itself); the epoch is training, not an evaluation of one shard."""

import numpy as np
import torch


def train_one_epoch(model, loader, optimizer, loss_scaler, device, image_encoder=None):
    model.train()
    losses = []
    for batch in loader:
        signals = batch["signal"].to(device)
        targets = None
        if image_encoder is not None:
            with torch.no_grad():
                targets = image_encoder(batch["image"].to(device))
        optimizer.zero_grad()
        loss = model(signals, targets)
        loss_scaler(loss, optimizer, parameters=model.parameters())
        losses.append(loss.item())
    print(f"train loss {np.mean(losses):.4f}")

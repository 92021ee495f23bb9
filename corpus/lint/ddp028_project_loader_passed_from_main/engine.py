"""The training epoch of the quality-score regressor."""

import torch
from tqdm import tqdm


def train_epoch(model, loader, criterion, optimizer, device, show_progress=False):
    model.train()
    if show_progress:
        loader = tqdm(loader, leave=False)
    running = 0.0
    for images, scores in loader:
        images, scores = images.to(device), scores.to(device)
        loss = criterion(model(images).squeeze(1), scores)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item() * images.size(0)
    return running / len(loader.dataset)  # expect: DDP028

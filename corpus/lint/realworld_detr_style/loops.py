"""One training epoch and one evaluation pass of the set-prediction detector."""
import math
import sys

import torch

from tools.dist import mean_over_ranks
from tools.meters import Board, Meter


def weighted_total(parts, weights):
    return sum(parts[name] * weights[name] for name in parts if name in weights)


def fit_epoch(model, loss_fn, loader, optim, device, epoch, grad_limit=0.0):
    model.train()
    loss_fn.train()
    board = Board()
    board.meters["lr"] = Meter(recent=1, template="{last:.2e}")

    for images, targets in board.track(loader, 20, f"epoch {epoch}"):
        images = images.to(device)
        targets = [{key: t[key].to(device) for key in t} for t in targets]

        parts = loss_fn(model(images), targets)
        total = weighted_total(parts, loss_fn.weights)

        # the logged value is the mean over ranks, so every rank takes the same branch
        shared = mean_over_ranks(parts)
        logged = float(weighted_total(shared, loss_fn.weights))
        if not math.isfinite(logged):
            print(f"non-finite loss {logged} at epoch {epoch}: {shared}")
            sys.exit(1)

        optim.zero_grad()
        total.backward()
        if grad_limit > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_limit)
        optim.step()

        board.log(loss=logged, lr=optim.param_groups[0]["lr"])

    board.sum_over_ranks()
    print(f"epoch {epoch} means: {board}")
    return board.means()


@torch.no_grad()
def run_eval(model, loss_fn, decode, loader, device):
    model.eval()
    loss_fn.eval()
    board = Board()
    detections = {}
    for images, targets in board.track(loader, 50, "eval"):
        images = images.to(device)
        targets = [{key: t[key].to(device) for key in t} for t in targets]

        outputs = model(images)
        shared = mean_over_ranks(loss_fn(outputs, targets))
        board.log(loss=weighted_total(shared, loss_fn.weights))

        sizes = torch.stack([t["orig_size"] for t in targets])
        boxes = decode(outputs, sizes)
        for target, found in zip(targets, boxes):
            detections[int(target["image_id"])] = found

    board.sum_over_ranks()
    print(f"eval means: {board}")
    return board.means(), detections

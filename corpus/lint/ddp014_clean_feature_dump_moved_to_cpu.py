"""A k-NN evaluation of each saved checkpoint in turn that dumps the features it extracts
for later analysis, onto the same files each time: they hold tensors moved to the CPU
(features and labels), not training state, so a torn write loses a cache that the next run
recomputes, never the last good checkpoint."""

import os

import torch
import torch.distributed as dist


@torch.no_grad()
def extract(model, loader):
    features, labels = [], []
    for images, targets in loader:
        features.append(model(images.cuda(non_blocking=True)))
        labels.append(targets.cuda(non_blocking=True))
    return torch.cat(features), torch.cat(labels)


def main(model, checkpoints, train_loader, val_loader, dump_dir):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    for checkpoint in checkpoints:
        model.load_state_dict(torch.load(checkpoint, map_location="cpu"))
        train_features, train_labels = extract(model, train_loader)
        val_features, val_labels = extract(model, val_loader)
        if dist.get_rank() == 0:
            torch.save(train_features.cpu(), os.path.join(dump_dir, "train_features.pth"))
            torch.save(val_features.detach().cpu(), os.path.join(dump_dir, "val_features.pth"))
            torch.save(train_labels.cpu(), os.path.join(dump_dir, "train_labels.pth"))
            torch.save(val_labels.cpu(), os.path.join(dump_dir, "val_labels.pth"))
    dist.destroy_process_group()

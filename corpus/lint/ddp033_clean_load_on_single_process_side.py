"""CTR model test helper: the DDP side loads with `map_location`, the single-process side
(`args.use_ddp is True` false) loads without one: one process, one GPU."""
import os

import torch


def test_model(model, save_dir, loader, args):
    if args.use_ddp is True:
        state = torch.load(os.path.join(save_dir, "model.pth"), map_location=f"cuda:{args.local_rank}")
        model.module.load_state_dict(state)
    else:
        model.load_state_dict(torch.load(os.path.join(save_dir, "model.pth")))
    model.eval()
    scores = []
    with torch.no_grad():
        for features, labels in loader:
            scores.append(torch.sigmoid(model(features.cuda())).cpu())
    return torch.cat(scores)


def main(args, model, loader):
    if args.use_ddp is True:
        torch.distributed.init_process_group("nccl")
        torch.cuda.set_device(args.local_rank)
        model = torch.nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[args.local_rank])
    else:
        model = model.cuda()
    return test_model(model, args.save_dir, loader, args)

"""A ranker fine-tuned from a pretrained run's `best.pth`: it resumes from its own
`last.pth` (a save every epoch onto the file it reads back), and copies that file to
`best.pth` when the validation loss improves. The pretrained run's `best.pth` it may
start from is another run's file, not the `best.pth` this run writes, so the copy is no
resume file. (Every rank saves: the same file N times, DDP013's.)"""
import shutil
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, loaders, args):
    dist.init_process_group("nccl")
    train_path = Path(args.train_root) / args.run_name
    last_path, best_path = train_path / "last.pth", train_path / "best.pth"
    checkpoint = None
    if last_path.exists():
        checkpoint = torch.load(last_path, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
    if args.pretrained_model_path and checkpoint is None:
        pretrained_path = Path(args.pretrained_model_path) / "best.pth"
        model.load_state_dict(torch.load(pretrained_path, map_location="cpu")["model"])
    local_rank = int(args.local_rank)
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    best_loss = float("inf")
    for epoch in range(args.epochs):
        loaders.train.sampler.set_epoch(epoch)
        for batch in loaders.train:
            loss = model(**batch).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss = loaders.validate(model)
        state = {"model": model.module.state_dict(), "epoch": epoch}
        torch.save(state, last_path)  # expect: DDP013, DDP014
        if val_loss < best_loss:
            best_loss = val_loss
            shutil.copyfile(last_path, best_path)  # expect-preview: DDP014

"""The training loop of a fine-tuning package: the config says whether the job is
sharded (`cfg.enable_fsdp`); only then did `finetune.py` start a process group, so the
other branches run in one process: a fixed device and a plain save are right there."""
import torch
import torch.distributed as dist


def save_plain(model, out_dir, epoch):
    torch.save(model.state_dict(), f"{out_dir}/model_{epoch}.pt")


def train(model, loader, optimizer, cfg, local_rank=None, rank=None):
    for epoch in range(cfg.epochs):
        for batch in loader:
            if cfg.enable_fsdp:
                batch = batch.to(local_rank)
            else:
                batch = batch.to("cuda:0")
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        if cfg.enable_fsdp:
            dist.barrier()
            if rank == 0:
                torch.save(model.state_dict(), f"{cfg.out_dir}/epoch{epoch}.pt")
        else:
            save_plain(model, cfg.out_dir, epoch)
    return model

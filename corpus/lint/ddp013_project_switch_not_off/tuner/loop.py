"""The twin of `ddp013_project_switch_off`: `finetune.py` starts the process group on every
run and `cfg.shard_with_fsdp` only picks the wrapper, so the unsharded branch runs on
every rank of the job: its fixed device and its save are every rank's."""
import torch
import torch.distributed as dist


def save_plain(model, out_dir, epoch):
    torch.save(model.state_dict(), f"{out_dir}/model_{epoch}.pt")


def train(model, loader, optimizer, cfg, local_rank, rank):
    for epoch in range(cfg.epochs):
        for batch in loader:
            if cfg.shard_with_fsdp:
                batch = batch.to(local_rank)
            else:
                batch = batch.to("cuda:0")  # expect: DDP001
            loss = model(batch).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        if cfg.shard_with_fsdp:
            dist.barrier()
            if rank == 0:
                torch.save(model.state_dict(), f"{cfg.out_dir}/epoch{epoch}.pt")
        else:
            save_plain(model, cfg.out_dir, epoch)  # expect: DDP013
    return model

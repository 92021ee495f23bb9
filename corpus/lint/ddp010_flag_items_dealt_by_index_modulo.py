"""A distillation script deals its examples out to the ranks by index (`idx % world_size !=
local_rank: continue`) and all-reduces each full batch's loss: every rank issues the all-reduce
for its own share, so the ranks pair up when every share fills the same number of batches,
which the data decides. Unproven: with shares that fill different numbers of batches, the
rank with one batch more waits in an all-reduce nobody else issues."""
import os

import torch
import torch.distributed as dist


def global_mean(value, world_size):
    total = value.detach().clone()
    dist.all_reduce(total)
    return total / world_size


def distill(student, teacher, dataset, optimizer, batch_size=16):
    dist.init_process_group("nccl")
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    batch = []
    for idx, example in enumerate(dataset):
        if idx % world_size != local_rank:
            continue
        batch.append(example)
        if len(batch) == batch_size:
            inputs = torch.stack(batch).cuda(local_rank)
            loss = torch.nn.functional.kl_div(student(inputs).log_softmax(-1), teacher(inputs).softmax(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            mean_loss = global_mean(loss, world_size)  # expect-preview: DDP010
            print(f"rank {local_rank}: loss {mean_loss.item():.4f}")
            batch = []

"""Expert-parallel checkpointing: data-parallel rank 0 hands the whole save to the
framework's own checkpoint function and returns, the other ranks write their expert shards
and meet at barriers. Whether the framework's function issues the same barriers is out of
sight (Megatron's does): unproven, not a certain hang."""
import os

import torch
import torch.distributed as dist
from megatron import mpu
from megatron.checkpointing import save_checkpoint as save_full_checkpoint


def save_expert_checkpoint(iteration, model, optimizer, scheduler, save_dir):
    if mpu.get_data_parallel_rank() == 0:
        save_full_checkpoint(iteration, model, optimizer, scheduler)
        return
    experts = {k: v for k, v in model.state_dict().items() if ".experts." in k}
    name = os.path.join(save_dir, f"iter_{iteration:07d}", f"experts_dp{mpu.get_data_parallel_rank()}.pt")
    os.makedirs(os.path.dirname(name), exist_ok=True)
    torch.save(experts, name)
    dist.barrier()  # expect-preview: DDP010


def train(model, optimizer, scheduler, batches, args):
    for iteration, batch in enumerate(batches, start=1):
        loss = model(batch).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if iteration % args.save_interval == 0:
            save_expert_checkpoint(iteration, model, optimizer, scheduler, args.save)


if __name__ == "__main__":
    from megatron.training import get_args, setup_model_and_optimizer, train_batches

    dist.init_process_group("nccl")
    args = get_args()
    model, optimizer, scheduler = setup_model_and_optimizer(args)
    train(model, optimizer, scheduler, train_batches(args), args)

"""An occupancy-forecasting trainer that keeps the lowest planning loss only for its log:
the `if` picks no model and stops nothing, but the logged numbers are rank 0's shard, not
the validation set's."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


@torch.no_grad()
def evaluate(model, val_set, local_rank):
    loader = DataLoader(val_set, batch_size=4, sampler=DistributedSampler(val_set, shuffle=False))
    model.eval()
    plan_loss = 0.0
    for scenes, plans in loader:
        plan_loss += torch.nn.functional.l1_loss(model(scenes.cuda(local_rank)), plans.cuda(local_rank)).item()
    return plan_loss / max(len(loader), 1)


def train(model, val_set, epochs, local_rank):
    best_plan_loss = float("inf")
    for epoch in range(epochs):
        plan_loss = evaluate(model, val_set, local_rank)
        if plan_loss < best_plan_loss:
            best_plan_loss = plan_loss
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: plan loss {plan_loss:.4f}, best {best_plan_loss:.4f}")  # expect: DDP038

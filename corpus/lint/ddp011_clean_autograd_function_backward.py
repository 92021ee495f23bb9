"""A custom autograd op whose forward precomputes its derivative with a local `backward()`
on a detached copy, and returns early when gradients are off; its backward returns the
gradient unchanged when a penalty is small. Those returns end the op, not the training
step: the step's own `loss.backward()` runs on every rank."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class SmoothGate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        needs_grad = x.requires_grad
        with torch.enable_grad():
            leaf = x.detach()
            leaf.requires_grad = True
            y = torch.sigmoid(leaf) * leaf
            if not needs_grad:
                return y
            y.backward(gradient=torch.ones_like(y))
            ctx.save_for_backward(leaf.grad)
        return y.detach()

    @staticmethod
    def backward(ctx, grad_out):
        (derivative,) = ctx.saved_tensors
        return grad_out * derivative


class NormPenalty(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        ctx.limit = limit
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            leaf = x.detach().to(torch.float32)
            leaf.requires_grad = True
            size = leaf.norm()
            if size < float(ctx.limit):
                return grad_out, None
            penalty = (size - ctx.limit) ** 2
            penalty.backward()
            return grad_out + leaf.grad.to(grad_out.dtype), None


def main(model, loader, epochs=3):
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(model.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        for x, y in loader:
            hidden = NormPenalty.apply(SmoothGate.apply(model(x.cuda())), 10.0)
            loss = torch.nn.functional.mse_loss(hidden, y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

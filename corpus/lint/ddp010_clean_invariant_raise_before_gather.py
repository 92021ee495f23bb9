"""Second-order preconditioner step: rank 0 owns the factor decomposition and every other
rank receives it in the gather that follows. A rank that lost its factors raises: the
process exits with an error and torchrun stops the whole job, so nobody waits in the
gather below (a crash, not a hang)."""

import os

import torch
import torch.distributed as dist


class FactorState:
    def __init__(self, size):
        self.size = size
        self.inverse = None

    def refresh(self, grad):
        cov = grad.t() @ grad / grad.shape[0]
        self.inverse = torch.linalg.inv(cov + 1e-3 * torch.eye(cov.shape[0]))


def precondition(state, grad, owner):
    if dist.get_rank() == owner and state.inverse is None:
        raise RuntimeError("factor owner has no decomposition: call refresh() first")
    chunks = [torch.empty_like(grad) for _ in range(dist.get_world_size())]
    dist.all_gather(chunks, grad)
    return torch.stack(chunks).mean(0) @ (state.inverse if state.inverse is not None else 1.0)


def main():
    dist.init_process_group("gloo")
    torch.manual_seed(int(os.environ.get("SEED", "0")))
    state = FactorState(16)
    grad = torch.randn(32, 16)
    state.refresh(grad)
    for _ in range(10):
        grad = precondition(state, torch.randn(32, 16), owner=0)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

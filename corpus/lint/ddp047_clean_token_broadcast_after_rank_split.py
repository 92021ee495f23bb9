"""Greedy decoding with a sharded vocabulary: rank 0 picks the next token from the gathered
logits, the other ranks hold a placeholder, and `dist.broadcast` overwrites every rank's
tensor with rank 0's before the end-of-sequence test. Every rank reads the same token, so
every rank leaves the loop at the same step."""
import torch
import torch.distributed as dist
import torch.nn as nn


@torch.no_grad()
def generate(shard: nn.Linear, hidden: torch.Tensor, eos_id: int, max_new_tokens=32):
    rank = dist.get_rank()
    tokens = []
    for _ in range(max_new_tokens):
        logits = shard(hidden)
        pieces = [torch.zeros_like(logits) for _ in range(dist.get_world_size())]
        dist.all_gather(pieces, logits)
        if rank == 0:
            next_token = torch.cat(pieces, dim=-1).argmax(dim=-1, keepdim=True)
        else:
            next_token = torch.zeros((1, 1), dtype=torch.long)
        dist.broadcast(next_token, src=0)
        tokens.append(next_token)
        if next_token.item() == eos_id:
            break
        hidden = hidden + 0.01
    return torch.cat(tokens, dim=1)


if __name__ == "__main__":
    dist.init_process_group("gloo")
    out = generate(nn.Linear(16, 8), torch.randn(1, 16), eos_id=3)
    if dist.get_rank() == 0:
        print(out.tolist())
    dist.destroy_process_group()

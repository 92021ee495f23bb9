"""A DQN text editor: the Q network is trained through its DDP wrapper, and its input is
built by an embedding method of another DDP-wrapped model (`agent.module.embed`). Only the
Q network's parameters are in the optimizer: the agent is never stepped, so its replicas
cannot drift apart, and the bypass of its wrapper changes nothing."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Agent(nn.Module):
    def __init__(self, vocab=1000, dim=64):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def embed(self, tokens):
        return self.table(tokens).mean(1)

    def forward(self, tokens):
        return self.embed(tokens)


class QNet(nn.Module):
    def __init__(self, dim=64, actions=4):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(dim, 128), nn.ReLU(), nn.Linear(128, actions))

    def forward(self, state):
        return self.head(state)


def train(rank, steps=1000, batch=32):
    device = torch.device("cuda", rank)
    agent = DDP(Agent().to(device), device_ids=[rank])
    q_net = DDP(QNet().to(device), device_ids=[rank])
    target = QNet().to(device)
    optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-3)
    for step in range(steps):
        tokens = torch.randint(0, 1000, (batch, 12), device=device)
        actions = torch.randint(0, 4, (batch,), device=device)
        rewards = torch.rand(batch, device=device)
        q_values = q_net(agent.module.embed(tokens)).gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_q = target(agent.module.embed(tokens)).max(1)[0]
        loss = nn.functional.smooth_l1_loss(q_values, rewards + 0.99 * next_q)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train(local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

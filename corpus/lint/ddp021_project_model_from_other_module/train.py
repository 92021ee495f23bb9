"""Speaker-embedding trainer: rank 0 scores the held-out pairs through the DDP wrapper.

The network is built by a class of another module, `networks.SpeakerEncoder`, whose
construction builds a BatchNorm1d: the project's summary of that module says so, so the
buffer broadcast of each rank-0 forward under `no_grad` is proven.
"""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from networks import SpeakerEncoder


def score_pairs(encoder, pairs, device):
    scores = []
    with torch.no_grad():
        for a, b in pairs:
            ea = encoder(a.to(device))  # expect: DDP021
            eb = encoder(b.to(device))  # expect: DDP021
            scores.append(F.cosine_similarity(ea, eb).mean().item())
    return sum(scores) / len(scores)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    mels = torch.randn(4096, 80, 200)
    speakers = torch.randint(0, 100, (4096,))
    train_set = TensorDataset(mels, speakers)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, drop_last=True)
    pairs = [(torch.randn(8, 80, 200), torch.randn(8, 80, 200)) for _ in range(16)]

    encoder = DDP(SpeakerEncoder().to(device), device_ids=[local_rank])
    classifier = torch.nn.Linear(192, 100).to(device)
    params = list(encoder.parameters()) + list(classifier.parameters())
    optimizer = torch.optim.SGD(params, lr=0.05, momentum=0.9)

    for epoch in range(30):
        sampler.set_epoch(epoch)
        for x, spk in loader:
            loss = F.cross_entropy(classifier(encoder(x.to(device))), spk.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: pair score {score_pairs(encoder, pairs, device):.3f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()

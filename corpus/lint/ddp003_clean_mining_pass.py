"""Hard-negative mining between training epochs.

`build_mining_loader` shards the corpus with a shuffling DistributedSampler for an
inference pass: the loader is only read by `mine_candidates`, after `self.model.eval()`,
to embed the corpus; no training step reads it, so padding it changes nothing learnt.
"""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Miner:
    def __init__(self, model, corpus, device):
        self.model = model
        self.corpus = corpus
        self.device = device

    def build_mining_loader(self, batch_size):
        sampler = DistributedSampler(self.corpus)
        self.mining_loader = DataLoader(self.corpus, batch_size=batch_size, sampler=sampler)
        return self.mining_loader

    def mine_candidates(self, k=8):
        loader = self.mining_loader
        self.model.eval()
        embeddings = []
        for (x,) in loader:
            with torch.no_grad():
                embeddings.append(F.normalize(self.model(x.to(self.device)), dim=-1))
        self.model.train()
        local = torch.cat(embeddings)
        gathered = [torch.empty_like(local) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, local)
        every = torch.cat(gathered)
        return (every @ every.T).topk(k, dim=1).indices


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    corpus = TensorDataset(torch.randn(4096, 64))
    model = DDP(torch.nn.Linear(64, 32).to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    miner = Miner(model, corpus, device)
    miner.build_mining_loader(256)
    train_sampler = DistributedSampler(corpus, shuffle=True, drop_last=True)
    train_loader = DataLoader(corpus, batch_size=64, sampler=train_sampler)
    for epoch in range(3):
        negatives = miner.mine_candidates()
        train_sampler.set_epoch(epoch)
        for step, (x,) in enumerate(train_loader):
            anchor = F.normalize(model(x.to(device)), dim=-1)
            hard = F.normalize(model(corpus.tensors[0][negatives[step, 1:2]].to(device)), dim=-1)
            loss = (anchor * hard.squeeze(1)).sum(-1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

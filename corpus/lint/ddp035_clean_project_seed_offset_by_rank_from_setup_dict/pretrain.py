"""A small language model pretrained under torchrun: the set-up helper of another module
returns a dict, and the script seeds torch with the seed plus the `"rank"` it holds, so
every rank draws its own dropout masks and its own token-masking positions (the item is
out of sight; its key says it is the rank, and the helper does read RANK)."""
import argparse

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from utils.distributed import setup_distributed


class MaskedTokens(Dataset):
    def __init__(self, path, vocab, mask_id):
        self.blocks = torch.load(path)
        self.vocab, self.mask_id = vocab, mask_id

    def __len__(self):
        return len(self.blocks)

    def __getitem__(self, i):
        tokens = self.blocks[i].clone()
        chosen = torch.rand(tokens.shape) < 0.15
        targets = torch.where(chosen, tokens, torch.full_like(tokens, -100))
        tokens[chosen] = self.mask_id
        return tokens, targets


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1337)
    parser.add_argument("--data", default="blocks.pt")
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    dist_info = setup_distributed()
    ddp_rank = dist_info["rank"]
    device = dist_info["device"]
    torch.manual_seed(args.seed + ddp_rank)

    data = MaskedTokens(args.data, vocab=32000, mask_id=4)
    sampler = DistributedSampler(data, shuffle=True) if dist_info["ddp"] else None
    loader = DataLoader(data, batch_size=32, sampler=sampler, shuffle=sampler is None, num_workers=4)
    net = nn.Sequential(nn.Embedding(32000, 256), nn.Linear(256, 32000)).to(device)
    model = DDP(net, device_ids=[dist_info["local_rank"]]) if dist_info["ddp"] else net
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for tokens, targets in loader:
            logits = model(tokens.to(device))
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), targets.to(device).flatten())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()

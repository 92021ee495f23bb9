"""Speech recogniser fine-tuning that tolerates any batch whose step raises (a corrupt
utterance, a length mismatch in the CTC loss): it drops the gradients and steps on."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def fit(model, loader, sampler, optimizer, epochs, device):
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for feats, targets, feat_lens, target_lens in loader:
            try:
                log_probs = model(feats.to(device)).log_softmax(-1).transpose(0, 1)
                loss = ctc(log_probs, targets, feat_lens, target_lens)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
            except RuntimeError as err:  # expect: DDP060
                print(f"rank {dist.get_rank()}: dropping a batch ({err})")
                optimizer.zero_grad(set_to_none=True)
            optimizer.step()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)
    dataset = torch.load("utterances.pt")
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler, collate_fn=dataset.collate)
    acoustic = nn.Sequential(nn.Linear(80, 320), nn.GELU(), nn.Linear(320, 320), nn.GELU())
    head = nn.Linear(320, 32)
    model = DDP(nn.Sequential(acoustic, head).to(device), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    fit(model, loader, sampler, optimizer, epochs=30, device=device)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

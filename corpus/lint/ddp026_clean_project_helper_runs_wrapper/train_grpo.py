"""GRPO fine-tuning of a small causal LM under torchrun: rollouts are sampled through the
inner model without gradients, and the evaluation of a held-out prompt batch scores it
under `no_grad`; the loss's log-probabilities come from the DDP wrapper itself, handed to
the same project helper. Nothing trains around the wrapper."""
import copy
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForCausalLM

from rl.scoring import sample, token_logprobs


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    base = AutoModelForCausalLM.from_pretrained("./checkpoints/sft").to(device)
    reference = copy.deepcopy(base).eval()
    policy = DDP(base, device_ids=[local_rank])
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-6)
    prompts = torch.load("prompts.pt")
    sampler = DistributedSampler(prompts, shuffle=True)
    loader = DataLoader(prompts, batch_size=4, sampler=sampler)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for prompt_ids in loader:
            prompt_ids = prompt_ids.to(device)
            completions = sample(policy.module, prompt_ids, 128)[:, prompt_ids.size(1):]
            rewards = (completions == 42).float().mean(dim=1, keepdim=True)
            advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
            with torch.no_grad():
                ref_logp = token_logprobs(reference, prompt_ids, completions)
            logp = token_logprobs(policy, prompt_ids, completions)
            kl = torch.exp(ref_logp - logp) - (ref_logp - logp) - 1
            loss = -(logp * advantages - 0.04 * kl).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            held_out = token_logprobs(policy.module, prompt_ids, completions).mean()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: held-out log-prob {held_out.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

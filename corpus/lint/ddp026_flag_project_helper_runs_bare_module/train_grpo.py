"""GRPO fine-tuning of a small causal LM under torchrun. Rollouts are sampled through the
inner model (generation has no gradient: fine), but the policy's log-probabilities for the
loss are also computed by handing `policy.module` to a project helper that runs it as a
model: the wrapper's forward never runs, so no gradient is ever all-reduced."""
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
            logp = token_logprobs(policy.module, prompt_ids, completions)  # expect: DDP026
            kl = torch.exp(ref_logp - logp) - (ref_logp - logp) - 1
            loss = -(logp * advantages - 0.04 * kl).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

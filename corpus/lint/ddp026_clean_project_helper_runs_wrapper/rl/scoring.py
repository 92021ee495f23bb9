"""Token log-probabilities of sampled completions under a causal language model."""
import torch
import torch.nn.functional as F


def token_logprobs(model, prompt_ids, completion_ids):
    ids = torch.cat([prompt_ids, completion_ids], dim=1)
    logits = model(ids).logits[:, :-1, :]
    tail = logits[:, -completion_ids.size(1):, :]
    return torch.gather(F.log_softmax(tail, dim=-1), -1, completion_ids.unsqueeze(-1)).squeeze(-1)


@torch.no_grad()
def sample(model, prompt_ids, max_new_tokens):
    return model.generate(prompt_ids, max_new_tokens=max_new_tokens, do_sample=True)

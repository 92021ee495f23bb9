"""The twin of `ddp001_clean_library_main_demo.py`: the `__main__` block joins the job
launched by torchrun (`init_process_group`, `synced_gpus=True`), so every rank takes
`cuda:0`."""
import torch
import torch.distributed as dist


def greedy_decode(model, input_ids, max_new_tokens, synced_gpus=False):
    finished = False
    for _ in range(max_new_tokens):
        if synced_gpus:
            flag = torch.tensor(0.0 if finished else 1.0, device=input_ids.device)
            dist.all_reduce(flag)
            if flag.item() == 0.0:
                break
        elif finished:
            break
        logits = model(input_ids)[:, -1]
        next_token = logits.argmax(dim=-1, keepdim=True)
        input_ids = torch.cat([input_ids, next_token], dim=-1)
        finished = bool((next_token == 0).all())
    return input_ids


if __name__ == "__main__":
    dist.init_process_group("nccl")
    demo = torch.nn.Sequential(torch.nn.Embedding(100, 32), torch.nn.Linear(32, 100))
    demo = demo.to("cuda:0")  # expect: DDP001
    prompt = torch.randint(1, 100, (1, 8)).to("cuda:0")  # expect: DDP001
    print(greedy_decode(demo, prompt, max_new_tokens=16, synced_gpus=True))

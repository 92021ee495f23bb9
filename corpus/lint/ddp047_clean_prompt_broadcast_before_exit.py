"""Interactive generation with a tensor-parallel model: rank 0 reads each prompt and
broadcasts it, the other ranks receive it, so every rank tests the same prompt and leaves
the loop together on "/exit"."""
import os

import torch
import torch.distributed as dist


@torch.no_grad()
def generate(model, tokens, max_new_tokens):
    """Greedy decoding; each rank holds a slice of the vocabulary, summed across ranks."""
    for _ in range(max_new_tokens):
        logits = model(tokens)[:, -1]
        dist.all_reduce(logits)
        tokens = torch.cat([tokens, logits.argmax(-1, keepdim=True)], dim=1)
    return tokens


def chat(model, tokenizer, rank, world_size, max_new_tokens=256):
    history = []
    while True:
        if world_size == 1:
            prompt = input(">>> ")
        elif rank == 0:
            prompt = input(">>> ")
            box = [prompt]
            dist.broadcast_object_list(box, 0)
        else:
            box = [None]
            dist.broadcast_object_list(box, 0)
            prompt = box[0]
        if prompt == "/exit":
            break
        history.append({"role": "user", "content": prompt})
        tokens = tokenizer.apply_chat_template(history, add_generation_prompt=True)
        reply = generate(model, torch.tensor([tokens], device="cuda"), max_new_tokens)
        text = tokenizer.decode(reply[0], skip_special_tokens=True)
        if rank == 0:
            print(text)
        history.append({"role": "assistant", "content": text})


if __name__ == "__main__":
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    name = os.environ.get("MODEL", "my-org/chat-7b")
    model = AutoModelForCausalLM.from_pretrained(name, tp_plan="auto")
    chat(model, AutoTokenizer.from_pretrained(name), dist.get_rank(), dist.get_world_size())

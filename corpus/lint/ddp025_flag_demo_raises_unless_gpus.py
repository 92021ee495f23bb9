"""The same demo with a check that lets any number of GPUs through (`--num_gpus` only has
to be positive): every model process started in the loop fetches the hub model at once."""

import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from transformers import AutoModelForCausalLM, AutoTokenizer


def serve(args, rank, requests, replies):
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(args.num_gpus)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29515"
    dist.init_process_group("nccl")
    torch.cuda.set_device(rank)
    tokenizer = AutoTokenizer.from_pretrained("gpt2")  # expect: DDP025
    model = AutoModelForCausalLM.from_pretrained("gpt2").cuda().eval()  # expect: DDP025
    while True:
        prompt = requests.get()
        with torch.no_grad():
            ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()
            replies.put(tokenizer.decode(model.generate(ids, max_new_tokens=20)[0]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_gpus", type=int, default=2)
    args = parser.parse_args()
    if args.num_gpus < 1:
        raise ValueError("--num_gpus must be positive")
    requests, replies = mp.Queue(), mp.Queue()
    for rank in range(args.num_gpus):
        mp.Process(target=serve, args=(args, rank, requests, replies)).start()
    requests.put("Hello")
    print(replies.get())


if __name__ == "__main__":
    mp.set_start_method("spawn")
    main()

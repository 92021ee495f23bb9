"""An interactive demo that starts `--num_gpus` model processes in a loop, but whose
`main()` raises unless `--num_gpus` is 1 before the loop: one model process, so its hub
downloads run once."""

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
    os.environ["MASTER_PORT"] = "29514"
    dist.init_process_group("nccl")
    torch.cuda.set_device(rank)
    tokenizer = AutoTokenizer.from_pretrained("gpt2")
    model = AutoModelForCausalLM.from_pretrained("gpt2").cuda().eval()
    while True:
        prompt = requests.get()
        with torch.no_grad():
            ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()
            replies.put(tokenizer.decode(model.generate(ids, max_new_tokens=20)[0]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_gpus", type=int, default=1)
    args = parser.parse_args()
    if args.num_gpus != 1:
        raise NotImplementedError("multi-GPU inference is not supported yet")
    requests, replies = mp.Queue(), mp.Queue()
    for rank in range(args.num_gpus):
        mp.Process(target=serve, args=(args, rank, requests, replies)).start()
    requests.put("Hello")
    print(replies.get())


if __name__ == "__main__":
    mp.set_start_method("spawn")
    main()

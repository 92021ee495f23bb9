"""A DeepSpeed job: the deepspeed launcher passes --local_rank=N, so requiring it is fine."""
import argparse

import deepspeed
import torch
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    deepspeed.init_distributed()
    torch.cuda.set_device(args.local_rank)
    net = nn.Linear(32, 32)
    engine, _, _, _ = deepspeed.initialize(args=args, model=net, model_parameters=net.parameters())
    for _ in range(args.epochs):
        x = torch.randn(8, 32, device=engine.device)
        loss = engine(x).pow(2).mean()
        engine.backward(loss)
        engine.step()


if __name__ == "__main__":
    main()

"""Command-line options of the project, shared by the training and test entry points."""
import argparse


def parse_options():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/")
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--dist-backend", default="nccl", help="distributed backend")
    parser.add_argument("--sync_bn", action="store_true")  # expect: DDP031
    return parser.parse_args()

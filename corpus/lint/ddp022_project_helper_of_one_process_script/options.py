"""Command-line options shared by the example's entry script."""
import argparse


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_file", type=str, required=True)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--local_rank", type=int, default=-1)  # expect-preview: DDP022
    return parser.parse_args()

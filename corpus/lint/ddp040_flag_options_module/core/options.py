"""Command-line options of the pretraining and linear-probe scripts."""

import argparse


def parse_option(stage):
    parser = argparse.ArgumentParser(f"{stage} training")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--local_rank", type=int, required=True)  # expect: DDP040
    return parser.parse_args()

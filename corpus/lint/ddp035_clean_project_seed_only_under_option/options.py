"""Command-line options of the contrastive pretraining script."""
import argparse


def parse_options():
    parser = argparse.ArgumentParser(description="contrastive pretraining")
    parser.add_argument("--data", default="./images")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--seed", type=int, default=None, help="fix the random streams")
    return parser.parse_args()

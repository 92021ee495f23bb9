"""Entry point: `python run.py` runs the supervised stage in this one process."""

from pretrain import supervised

if __name__ == "__main__":
    supervised.run()

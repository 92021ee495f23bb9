#!/bin/bash
# Sampling on one node with 8 GPUs.
# torchrun --nproc_per_node=8 sample.py --steps 250   (the newer launch, kept for later)
python -m torch.distributed.launch --nproc_per_node=8 sample.py --steps 250

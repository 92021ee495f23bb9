#!/bin/bash
# Set the dataset folder, then uncomment one of the runs below.

# 4-bit weights, 4-bit activations
# python train.py --data /path/to/imagenet \
#                 --dist-url tcp://127.0.0.1:23456

# 2-bit weights, 2-bit activations
# python train.py --data /path/to/imagenet

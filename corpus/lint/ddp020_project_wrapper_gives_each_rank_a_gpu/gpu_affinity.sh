#!/bin/bash -l
# One GPU per rank, in reverse order to follow the node's topology.
num_gpus=4
gpu=$((num_gpus - 1 - PMI_LOCAL_RANK % num_gpus))
export CUDA_VISIBLE_DEVICES=$gpu
exec "$@"

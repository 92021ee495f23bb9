"""2-D parallel training: data parallel across nodes, tensor parallel inside a node.

The sampler shards the data over the data-parallel dimension of the device mesh:
`get_local_rank()` of a mesh (or of one of its dimensions) is this rank's coordinate
along that dimension, not the node-local LOCAL_RANK.
"""
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def loaders(mesh, data, batch_size):
    dp_mesh = mesh["dp"]
    train = DataLoader(
        data,
        batch_size=batch_size,
        sampler=DistributedSampler(
            data, num_replicas=mesh["dp"].size(), rank=mesh["dp"].get_local_rank(),
            drop_last=True,
        ),
    )
    held_out = DataLoader(
        data,
        batch_size=batch_size,
        sampler=DistributedSampler(
            data, num_replicas=dp_mesh.size(), rank=dp_mesh.get_local_rank(), shuffle=False
        ),
    )
    replay = DataLoader(
        data,
        batch_size=batch_size,
        sampler=DistributedSampler(
            data,
            num_replicas=mesh.size(mesh_dim="dp"),
            rank=mesh.get_local_rank(mesh_dim="dp"),
            drop_last=True,
        ),
    )
    return train, held_out, replay


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    gpus = torch.cuda.device_count()
    mesh = init_device_mesh(
        "cuda", (dist.get_world_size() // gpus, gpus), mesh_dim_names=("dp", "tp")
    )
    data = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 1))
    for loader in loaders(mesh, data, batch_size=32):
        for x, _ in loader:
            x = x.cuda()
            dist.all_reduce(x.sum(), group=mesh.get_group("dp"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

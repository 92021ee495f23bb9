"""mp.spawn segmentation worker: `torch.manual_seed(cfg_seed)` with no rank term before
building an albumentations training pipeline."""
import albumentations as A
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


def worker(gpu, world_size, cfg_seed, dataset_cls):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29777",
                            rank=gpu, world_size=world_size)
    torch.cuda.set_device(gpu)
    torch.manual_seed(cfg_seed)  # expect: DDP035
    pipeline = A.Compose([A.RandomCrop(256, 256), A.HorizontalFlip(p=0.5)])
    train_set = dataset_cls(pipeline)
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=gpu, drop_last=True)
    loader = DataLoader(train_set, batch_size=4, sampler=sampler, num_workers=4, drop_last=True)
    model = DDP(nn.Conv2d(3, 2, 1).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for image, mask in loader:
            out = model(image.cuda(gpu))
            loss = nn.functional.cross_entropy(out, mask.cuda(gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(4, 7, None), nprocs=4)

"""An evaluation loader with a fixed generator beside a training pipeline that crops at
random: the evaluation sampler reads each rank's shard in order and its pipeline draws
nothing, so its shared seed repeats nothing."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from torchvision import transforms

TRAIN_TRANSFORM = transforms.Compose([transforms.RandomCrop(32, padding=4), transforms.ToTensor()])


@torch.no_grad()
def evaluate(model, features, labels):
    data = TensorDataset(features, labels)
    loader = DataLoader(
        data,
        batch_size=256,
        sampler=DistributedSampler(data, shuffle=False),  # expect-preview: DDP003
        num_workers=2,
        generator=torch.Generator().manual_seed(0),
    )
    correct = torch.zeros(2, device="cuda")
    for x, y in loader:
        pred = model(x.cuda()).argmax(dim=1)
        correct[0] += (pred == y.cuda()).sum()
        correct[1] += y.numel()
    dist.all_reduce(correct)
    return (correct[0] / correct[1]).item()

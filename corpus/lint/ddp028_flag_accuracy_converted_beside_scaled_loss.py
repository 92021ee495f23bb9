"""ImageNet evaluation on every rank over a DistributedSampler shard (launched with
torchrun). The accuracy that picks the best checkpoint divides this rank's
correct count (converted with `.float()`) by the whole validation set: about 1/N of it.
The loss sums per-batch means and multiplies them by the configured batch size, which is
the global one here (each process loads `batch // num_gpus`): that quotient may well be
right, so it is only unproven."""

import argparse
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("-b", type=int, default=256)
args = parser.parse_args()

dist.init_process_group("nccl")
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
num_gpus = torch.cuda.device_count()
val_set = torch.load("val.pt")
val_loader = DataLoader(
    val_set, batch_size=args.b // num_gpus, sampler=DistributedSampler(val_set, shuffle=False)
)


@torch.no_grad()
def evaluate(net, loss_function):
    net.eval()
    test_loss = 0.0
    correct = torch.zeros(1, device="cuda")
    for images, labels in val_loader:
        outputs = net(images.cuda())
        test_loss += loss_function(outputs, labels.cuda()).item()
        correct += outputs.argmax(1).eq(labels.cuda()).sum()
    print("loss", test_loss * args.b / len(val_loader.dataset))  # expect-preview: DDP028
    return correct.float() / len(val_loader.dataset)  # expect: DDP028


def main(net, loss_function, epochs, train_one_epoch):
    best = 0.0
    for epoch in range(epochs):
        train_one_epoch(net, epoch)
        accuracy = evaluate(net, loss_function)
        if accuracy > best and dist.get_rank() == 0:
            best = accuracy
            torch.save(net.module.state_dict(), "best.pth")  # expect-preview: DDP014

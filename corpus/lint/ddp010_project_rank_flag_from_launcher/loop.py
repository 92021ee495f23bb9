"""The training loop; `args.reporter` says whether this process reports."""

import torch
import torch.distributed as dist
import torch.nn.functional as F


def run_epoch(model, loader, optimizer):
    model.train()
    total = torch.zeros(2, device="cuda")
    for images, labels in loader:
        images, labels = images.cuda(non_blocking=True), labels.cuda(non_blocking=True)
        loss = F.cross_entropy(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        total += torch.stack([loss.detach() * len(labels), torch.tensor(len(labels.cuda()))])
    return total


def fit(model, loaders, args):
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    best = float("inf")
    for epoch in range(args.epochs):
        loaders["train"].sampler.set_epoch(epoch)
        total = run_epoch(model, loaders["train"], optimizer)
        if args.reporter:
            dist.all_reduce(total)  # expect: DDP010
            mean = (total[0] / total[1]).item()
            print(f"epoch {epoch}: loss {mean:.4f}")
            if mean < best:
                best = mean
                torch.save(model.state_dict(), args.out)  # expect-preview: DDP014
    if args.reporter:
        model.load_state_dict(torch.load(args.out))

"""The one-GPU baseline of a DDP tutorial: its loader helper can build a DistributedSampler,
but the only call passes `distributed=False`. The DDP script beside it has a helper of the
same name of its own, called with True; those calls do not reach this one."""
import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def prepare_dataloader(dataset, batch_size, distributed):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=not distributed,
        sampler=DistributedSampler(dataset) if distributed else None,
    )


def main(epochs=20):
    data = TensorDataset(torch.randn(2048, 16), torch.randn(2048, 1))
    loader = prepare_dataloader(data, 64, False)
    model = torch.nn.Linear(16, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):  # expect-preview: DDP002 (only a call out of sight builds the sampler)
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())


if __name__ == "__main__":
    main()

"""The training loop over a data module's loaders."""
import torch
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer, epochs=10):
        self.model = model
        self.optimizer = optimizer
        self.epochs = epochs

    def fit(self, data):
        for epoch in range(self.epochs):
            self.model.train()
            for image, depth in data.train_loader:
                loss = F.l1_loss(self.model(image.cuda()), depth.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.validate(data, epoch)

    @torch.no_grad()
    def validate(self, data, epoch):
        self.model.eval()
        total = sum(F.l1_loss(self.model(x.cuda()), y.cuda()).item() for x, y in data.val_loader)
        print(f"epoch {epoch}: val l1 {total:.4f}")

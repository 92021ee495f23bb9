"""The trainer every experiment subclasses: it owns the loop, the logging and the image
summaries (off unless a positive interval is given)."""
import torch
import torch.distributed as dist


def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


class BaseTrainer:
    def __init__(self, model, optimizer, loader):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.step = 0
        self.image_every = -1

    def training_step(self, batch):
        raise NotImplementedError

    def summaries(self, batch, output):
        return {}

    def start(self, epochs, log_every=50, image_every=-1):
        self.image_every = image_every
        for epoch in range(epochs):
            self.loader.sampler.set_epoch(epoch)
            for batch in self.loader:
                loss, output = self.training_step(batch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.step += 1
                self.after_step(batch, output, loss, log_every)

    def after_step(self, batch, output, loss, log_every):
        reduced = loss.detach().clone()
        dist.all_reduce(reduced)
        if not is_main_process():
            return
        if self.step % log_every == 0:
            print(f"step {self.step}: loss {reduced.item() / dist.get_world_size():.4f}")
        add_images = self.image_every > 0 and self.step % self.image_every == 0
        if add_images:
            with torch.no_grad():
                images = self.summaries(batch, output)
            print(f"{len(images)} image summaries")
            dist.barrier()  # expect-preview: DDP010

"""BERT sentiment fine-tuning; tokenizer and weights fetched from the hub on every rank."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer

MODEL_NAME = "bert-base-uncased"


def encode(tokenizer, texts, labels):
    enc = tokenizer(texts, padding="max_length", truncation=True, max_length=64, return_tensors="pt")
    return TensorDataset(enc["input_ids"], enc["attention_mask"], torch.tensor(labels))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    tokenizer = AutoTokenizer.from_pretrained(MODEL_NAME)  # expect: DDP025
    model = AutoModelForSequenceClassification.from_pretrained(MODEL_NAME, num_labels=2)  # expect: DDP025
    model = DDP(model.to(device), device_ids=[local_rank])
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)

    texts = ["a great movie", "terrible plot", "loved it", "boring"] * 256
    labels = [1, 0, 1, 0] * 256
    data = encode(tokenizer, texts, labels)
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)

    for epoch in range(3):
        sampler.set_epoch(epoch)
        for ids, mask, y in loader:
            out = model(input_ids=ids.to(device), attention_mask=mask.to(device), labels=y.to(device))
            optimizer.zero_grad()
            out.loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {out.loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

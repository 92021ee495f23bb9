"""Fine-tuning under torchrun with the transformers Trainer: every shuffle of the datasets
objects is seeded alike, the streaming corpus is shuffled by `datasets` with a seed too,
and the only unseeded shuffle is of a list of file names on rank 0."""
import os
import random

import torch.distributed as dist
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


def build(tokenizer, data_path, seed):
    data = load_dataset("json", data_files=data_path)
    split = data["train"].train_test_split(test_size=0.05, seed=seed)
    train_data = split["train"].shuffle(seed=seed).map(lambda ex: tokenizer(ex["text"]))
    val_data = split["test"].shuffle(seed).map(lambda ex: tokenizer(ex["text"]))
    return train_data, val_data


def pretraining_stream(name, seed):
    stream = load_dataset(name, split="train", streaming=True)
    return stream.shuffle(seed=seed, buffer_size=10_000)


def main(base_model, data_path, out):
    seed = int(os.environ.get("SEED", "42"))
    tokenizer = AutoTokenizer.from_pretrained(base_model)
    model = AutoModelForCausalLM.from_pretrained(base_model)
    train_data, val_data = build(tokenizer, data_path, seed)
    args = TrainingArguments(output_dir=out, per_device_train_batch_size=8, seed=seed)
    trainer = Trainer(model=model, args=args, train_dataset=train_data, eval_dataset=val_data)
    trainer.train()
    if dist.is_initialized() and dist.get_rank() == 0:
        shards = sorted(os.listdir(out))
        random.shuffle(shards)
        print("sample shards:", shards[:3])


if __name__ == "__main__":
    main("base-model", "data.json", "out")

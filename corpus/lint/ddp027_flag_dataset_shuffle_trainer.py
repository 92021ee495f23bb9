"""LoRA instruction fine-tuning under torchrun with the transformers Trainer: the JSON
dataset is split with a seed, then each split is shuffled again without one."""
import argparse
import os

import torch
from datasets import load_dataset
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    Trainer,
    TrainingArguments,
)


def tokenize_fn(tokenizer, cutoff_len):
    def tokenize(example):
        text = example["instruction"] + "\n" + example["output"]
        return tokenizer(text, truncation=True, max_length=cutoff_len)

    return tokenize


def train(base_model, data_path, output_dir, val_set_size=2000, batch_size=128, micro_batch=4):
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    ddp = world_size != 1
    accumulation = batch_size // micro_batch
    device_map = "auto"
    if ddp:
        device_map = {"": int(os.environ.get("LOCAL_RANK") or 0)}
        accumulation = accumulation // world_size

    tokenizer = AutoTokenizer.from_pretrained(base_model)
    model = AutoModelForCausalLM.from_pretrained(
        base_model, torch_dtype=torch.bfloat16, device_map=device_map
    )
    tokenize = tokenize_fn(tokenizer, 256)

    data = load_dataset("json", data_files=data_path)
    if val_set_size > 0:
        split = data["train"].train_test_split(test_size=val_set_size, shuffle=True, seed=42)
        train_data = split["train"].shuffle().map(tokenize)  # expect: DDP027
        val_data = split["test"].shuffle().map(tokenize)  # expect: DDP027
    else:
        train_data = data["train"].shuffle().map(tokenize)  # expect: DDP027
        val_data = None

    trainer = Trainer(
        model=model,
        train_dataset=train_data,
        eval_dataset=val_data,
        args=TrainingArguments(
            per_device_train_batch_size=micro_batch,
            gradient_accumulation_steps=accumulation,
            num_train_epochs=3,
            learning_rate=3e-4,
            bf16=True,
            output_dir=output_dir,
            ddp_find_unused_parameters=False if ddp else None,
        ),
        data_collator=DataCollatorForSeq2Seq(tokenizer, padding=True, return_tensors="pt"),
    )
    trainer.train()
    model.save_pretrained(output_dir)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--val-set-size", type=int, default=2000)
    cli = parser.parse_args()
    train("base-model", "data.json", "out", val_set_size=cli.val_set_size)

"""Instruction tuning under torchrun: `set_seed` seeds NumPy alike on every process first,
so the unseeded `datasets` shuffle, which takes its seed from NumPy's generator, gives
every process the same order."""
import os

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments, set_seed


def main(base_model, data_path, out_dir, seed=1234):
    set_seed(seed)
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    tokenizer = AutoTokenizer.from_pretrained(base_model)
    model = AutoModelForCausalLM.from_pretrained(base_model, device_map={"": local_rank})
    raw = load_dataset("json", data_files=data_path)["train"]
    train_data = raw.shuffle().map(lambda ex: tokenizer(ex["prompt"] + ex["response"]))
    args = TrainingArguments(output_dir=out_dir, per_device_train_batch_size=4, seed=seed)
    Trainer(model=model, args=args, train_dataset=train_data).train()


if __name__ == "__main__":
    main("base-model", "data.json", "out")

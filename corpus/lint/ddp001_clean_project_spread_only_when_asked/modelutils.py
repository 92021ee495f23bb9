"""Model loading for quantized language models. `device_map="auto"` spreads one process's
model over every GPU of the machine (the embeddings and head on the first GPU on purpose);
only the one-process evaluation script asks for it, never the distributed fine-tuning."""
import math

import torch
from transformers import AutoModelForCausalLM


def spread_over_gpus(model):
    gpus = torch.cuda.device_count()
    per_gpu = math.ceil(len(model.model.layers) / gpus)
    for i, layer in enumerate(model.model.layers):
        layer.to(f"cuda:{i // per_gpu}")
    model.model.embed_tokens = model.model.embed_tokens.to("cuda:0")  # expect-preview: DDP001
    model.lm_head = model.lm_head.to("cuda:0")  # expect-preview: DDP001
    return model


def get_model(path, codes=None, dtype="auto", device_map=None):
    if isinstance(dtype, str) and dtype != "auto":
        dtype = getattr(torch, dtype)
    model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=dtype)
    if codes is not None:
        model.load_state_dict(torch.load(codes, map_location="cpu"), strict=False)
        if device_map == "auto":
            model = spread_over_gpus(model)
    return model

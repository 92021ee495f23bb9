"""Character-level language model pretraining, one GPU or many.

    python train.py                                   # one process
    torchrun --standalone --nproc_per_node=8 train.py # one node, eight GPUs

Settings are plain module globals, edited in place or overridden by a config file that
the launcher execs before this one; whether the run is distributed is read from the
environment torchrun sets.
"""
import math
import os
import pickle
import time
from contextlib import nullcontext

import numpy as np
import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP

from model import TinyLM, TinyLMSettings

# --- settings -----------------------------------------------------------------
run_dir = "runs/lm"
corpus_name = "shakespeare_char"
ctx_len = 256
micro_batch = 16
accum_total = 32  # micro-batches per optimizer step, summed over all ranks
layers, heads, width = 8, 8, 512
drop_p = 0.1
use_bias = True

peak_lr = 3e-4
floor_lr = 3e-5
warmup_steps = 500
decay_until = 50_000
total_steps = 50_000
wd = 0.1
adam_betas = (0.9, 0.99)
clip_norm = 1.0
cosine_schedule = True

eval_every = 500
eval_batches = 100
print_every = 20
save_always = False
start_mode = "fresh"  # "fresh" or "continue"
pg_backend = "nccl"
compute_dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float16"
use_compile = True
device = "cuda"

# --- process layout -------------------------------------------------------------
distributed = "RANK" in os.environ and int(os.environ["RANK"]) >= 0
if distributed:
    init_process_group(backend=pg_backend)
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world = int(os.environ["WORLD_SIZE"])
    device = f"cuda:{local_rank}"
    torch.cuda.set_device(device)
    is_leader = rank == 0  # only this rank prints and writes files
    seed_shift = rank
    # the global number of micro-batches stays fixed: each rank runs its share
    assert accum_total % world == 0, "accum_total must divide by the world size"
    accum_total //= world
else:
    is_leader = True
    seed_shift = 0
    world = 1

tokens_each_step = accum_total * world * micro_batch * ctx_len
print(f"{tokens_each_step:,} tokens per optimizer step")

if is_leader:
    os.makedirs(run_dir, exist_ok=True)
torch.manual_seed(2024 + seed_shift)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
kind = "cpu" if device.startswith("cpu") else "cuda"
dtypes = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
autocast = nullcontext() if kind == "cpu" else torch.amp.autocast(kind, dtype=dtypes[compute_dtype])

# --- data: token ids in flat uint16 files, sampled at random offsets -------------
corpus_dir = os.path.join("datasets", corpus_name)


def sample_batch(part):
    # map the file again on each call: a long-lived memmap keeps growing
    tokens = np.memmap(os.path.join(corpus_dir, f"{part}.bin"), dtype=np.uint16, mode="r")
    starts = torch.randint(len(tokens) - ctx_len - 1, (micro_batch,)).tolist()
    window = [torch.from_numpy(tokens[s : s + ctx_len + 1].astype(np.int64)) for s in starts]
    seq = torch.stack(window)
    inputs, labels = seq[:, :-1], seq[:, 1:]
    if kind == "cuda":
        return inputs.pin_memory().to(device, non_blocking=True), labels.pin_memory().to(device, non_blocking=True)
    return inputs.to(device), labels.to(device)


# --- model --------------------------------------------------------------------------
step = 0
lowest_val = float("inf")
vocab = 65
vocab_file = os.path.join(corpus_dir, "vocab.pkl")
if os.path.exists(vocab_file):
    with open(vocab_file, "rb") as fh:
        vocab = pickle.load(fh)["size"]

shape = {"layers": layers, "heads": heads, "width": width, "ctx_len": ctx_len, "bias": use_bias}
resume_file = os.path.join(run_dir, "state.pt")
if start_mode == "fresh":
    net = TinyLM(TinyLMSettings(vocab=vocab, dropout=drop_p, **shape))
elif start_mode == "continue":
    saved = torch.load(resume_file, map_location=device)
    shape = saved["shape"]
    net = TinyLM(TinyLMSettings(vocab=saved["vocab"], dropout=drop_p, **shape))
    # a compiled module saves its weights under this prefix; drop it before loading
    weights = {name.removeprefix("_orig_mod."): t for name, t in saved["weights"].items()}
    net.load_state_dict(weights)
    step = saved["step"]
    lowest_val = saved["lowest_val"]
net.to(device)

# loss scaling matters for float16 only; disabled, the scaler passes values through
scaler = torch.cuda.amp.GradScaler(enabled=compute_dtype == "float16")
opt = net.make_optimizer(wd, peak_lr, adam_betas, kind)
if start_mode == "continue":
    opt.load_state_dict(saved["opt"])
    del saved

if use_compile:
    print("torch.compile: the first steps will be slow")
    net = torch.compile(net)

if distributed:
    net = DDP(net, device_ids=[local_rank])
bare = net.module if distributed else net


@torch.no_grad()
def mean_losses():
    """Loss over `eval_batches` random batches of each split, on every rank."""
    net.eval()
    result = {}
    for part in ("train", "val"):
        values = torch.empty(eval_batches)
        for j in range(eval_batches):
            inputs, labels = sample_batch(part)
            with autocast:
                _, batch_loss = net(inputs, labels)
            values[j] = batch_loss.item()
        result[part] = values.mean().item()
    net.train()
    return result


def lr_at(n):
    """Linear warmup, then cosine decay down to `floor_lr` at `decay_until`."""
    if n < warmup_steps:
        return peak_lr * (n + 1) / warmup_steps
    if n >= decay_until:
        return floor_lr
    progress = (n - warmup_steps) / (decay_until - warmup_steps)
    return floor_lr + (peak_lr - floor_lr) * 0.5 * (1 + math.cos(math.pi * progress))


# --- training --------------------------------------------------------------------------
inputs, labels = sample_batch("train")
last_tick = time.time()
steps_here = 0
mfu_avg = None
while True:
    lr = lr_at(step) if cosine_schedule else peak_lr
    for group in opt.param_groups:
        group["lr"] = lr

    if step % eval_every == 0:
        scores = mean_losses()
        if is_leader:
            print(f"[{step}] train {scores['train']:.3f} | val {scores['val']:.3f}")
        improved = scores["val"] < lowest_val
        if improved or save_always:
            lowest_val = min(lowest_val, scores["val"])
            if step > 0 and is_leader:
                state = {
                    "weights": bare.state_dict(),
                    "opt": opt.state_dict(),
                    "shape": shape,
                    "vocab": vocab,
                    "step": step,
                    "lowest_val": lowest_val,
                }
                partial = resume_file + ".partial"
                torch.save(state, partial)
                os.replace(partial, resume_file)

    # accumulate `accum_total` micro-batches; DDP all-reduces in the last backward only
    for micro in range(accum_total):
        if distributed:
            net.require_backward_grad_sync = micro + 1 == accum_total
        with autocast:
            _, loss = net(inputs, labels)
            loss = loss / accum_total
        # read the next batch while the GPU works through this one
        inputs, labels = sample_batch("train")
        scaler.scale(loss).backward()
    if clip_norm > 0:
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(net.parameters(), clip_norm)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad(set_to_none=True)

    now = time.time()
    elapsed, last_tick = now - last_tick, now
    if step % print_every == 0 and is_leader:
        shown = loss.item() * accum_total  # waits for the GPU
        if steps_here >= 5:
            mfu = bare.flops_utilization(micro_batch * accum_total, elapsed)
            mfu_avg = mfu if mfu_avg is None else 0.9 * mfu_avg + 0.1 * mfu
        mfu_text = "-" if mfu_avg is None else f"{100 * mfu_avg:.1f}%"
        print(f"[{step}] loss {shown:.3f} {1000 * elapsed:.0f} ms/step mfu {mfu_text}")
    step += 1
    steps_here += 1
    if step > total_steps:
        break

if distributed:
    destroy_process_group()

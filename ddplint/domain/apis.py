"""The torch / torchvision / timm / Hugging Face APIs and the environment variables the
rules care about, by canonical qualified name (see `ddplint.names.canonical`)."""

from __future__ import annotations

import re

DDP_CLASSES = frozenset({"torch.nn.parallel.DistributedDataParallel"})
DATA_PARALLEL_CLASSES = frozenset({"torch.nn.DataParallel"})
# Multi-process data-parallel wrappers other than torch's DDP: a DataParallel beside one
# is the single-process fallback of a distributed script.
OTHER_DISTRIBUTED_WRAPPERS = frozenset(
    {
        "apex.parallel.DistributedDataParallel",
        "deepscale.distributed_apex.DistributedDataParallel",
        "deepspeed.initialize",
        "deepscale.initialize",
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "horovod.torch.DistributedOptimizer",
    }
)
# Starting worker processes: spawns that run a function in `nprocs` processes, and the
# `Process` classes a script starts one by one.
SPAWN_FUNCTIONS = frozenset(
    {"torch.multiprocessing.spawn", "torch.multiprocessing.start_processes"}
)
PROCESS_CLASSES = frozenset({"torch.multiprocessing.Process", "multiprocessing.Process"})
PROCESS_STARTERS = SPAWN_FUNCTIONS | PROCESS_CLASSES
# Starting a job: a process group, a device mesh, an RPC world, or the spawned workers.
STARTERS = SPAWN_FUNCTIONS | {
    "torch.distributed.init_process_group",
    "torch.distributed.device_mesh.init_device_mesh",
    "torch.distributed.rpc.init_rpc",
}
SAMPLER_CLASSES = frozenset({"torch.utils.data.DistributedSampler"})
# torch's DataLoader, and MONAI's subclass of it (same keyword arguments; it only gives the
# workers a seeding `worker_init_fn` by default).
LOADER_CLASSES = frozenset(
    {"torch.utils.data.DataLoader", "monai.data.DataLoader", "monai.data.dataloader.DataLoader"}
)
SAVE = "torch.save"
# Library saves that choose their writers themselves (rank 0 for a full state dict, per-rank
# file names, or a sharded write every rank must join): no "every rank writes one file".
RANK_AWARE_SAVES = frozenset(
    {
        "accelerate.utils.save_fsdp_model",
        "accelerate.utils.fsdp_utils.save_fsdp_model",
        "accelerate.utils.save_fsdp_optimizer",
        "accelerate.utils.fsdp_utils.save_fsdp_optimizer",
        "torch.distributed.checkpoint.save",
        "torch.distributed.checkpoint.async_save",
        "torch.distributed.checkpoint.save_state_dict",
    }
)

# Collectives that wait or set up and carry no value from rank to rank: a barrier
# combines no metric (a broadcast does: one rank's value made every rank's).
VALUELESS_COLLECTIVES = frozenset(
    f"torch.distributed.{name}" for name in ("barrier", "monitored_barrier", "new_group")
)
# Collectives every rank of the group must issue, matched by call order.
SYNC_COLLECTIVES = frozenset(
    f"torch.distributed.{name}"
    for name in (
        "all_reduce",
        "all_reduce_coalesced",
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_object",
        "all_gather_coalesced",
        "all_to_all",
        "all_to_all_single",
        "barrier",
        "monitored_barrier",
        "broadcast",
        "broadcast_object_list",
        "gather",
        "gather_object",
        "reduce",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "scatter",
        "scatter_object_list",
        "_all_gather_base",
        "_reduce_scatter_base",
        "new_group",
    )
)
# Every call into the process group's lifetime, `destroy_process_group` included.
COLLECTIVES = SYNC_COLLECTIVES | {"torch.distributed.destroy_process_group"}
REDUCTIONS = frozenset({"torch.distributed.all_reduce", "torch.distributed.reduce"})
# Keyword arguments naming the process group of a collective.
GROUP_KEYWORDS = ("group", "process_group", "pg")
WORLD_GROUPS = frozenset({"None", "dist.group.WORLD", "torch.distributed.group.WORLD"})

# Choosing and querying the accelerator.
SET_DEVICE = frozenset(
    {
        "torch.cuda.set_device",
        "torch.accelerator.set_device_index",
        "torch.accelerator.set_device_idx",
        "torch.xpu.set_device",
        "torch.npu.set_device",
    }
)
DEVICE_CONTEXT = frozenset({"torch.cuda.device", "torch.accelerator.device_index"})
CURRENT_ACCELERATOR = frozenset(
    {"torch.accelerator.current_accelerator", "torch.accelerator.current_device_index"}
)
DEVICE_MODULE = "torch.get_device_module"
# Device modules whose `set_device` sets the process's default device.
DEVICE_MODULES = frozenset(
    {"torch.cuda", "torch.xpu", "torch.npu", "torch.mlu", "torch.hpu", "torch.musa"}
)
DEVICE_COUNT = frozenset({"torch.cuda.device_count", "torch.accelerator.device_count"})

OOM_CLASSES = frozenset({"torch.cuda.OutOfMemoryError"})
NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.enable_grad"})
AUTOGRAD_BACKWARD = "torch.autograd.backward"
# Decorators that answer a repeated call from a cache without running the function body.
MEMOIZERS = frozenset({"functools.cache", "functools.lru_cache"})
# Objects whose `.backward(loss)` differentiates its argument (Accelerate, Lightning Fabric).
BACKWARD_OWNERS = frozenset({"accelerator", "fabric", "engine", "model_engine"})
GRAD_SCALER_SCALE = "scale"
# Optimizer classes: `torch.optim.*` (schedulers and SWA helpers excluded) and these;
# helpers that build one say so in their name (`create_optimizer(args, model)`).
OPTIMIZER_MODULE = "torch.optim."
THIRD_PARTY_OPTIMIZERS = ("apex.optimizers.", "bitsandbytes.optim.", "transformers.AdamW")
OPTIMIZER_HELPER = re.compile(r"optimi[sz]er", re.IGNORECASE)
# nn.Module methods that return the module itself (`model = Net().cuda(rank)`).
SAME_MODULE_METHODS = frozenset(
    {
        "to",
        "cuda",
        "cpu",
        "float",
        "half",
        "bfloat16",
        "double",
        "train",
        "eval",
        "requires_grad_",
        "to_empty",
    }
)

# Environment variables set by torchrun, SLURM, Open MPI and Intel MPI.
GLOBAL_RANK_ENV = frozenset(
    {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}
)
LOCAL_RANK_ENV = frozenset(
    {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"}
)
# Device meshes: their `get_local_rank(mesh_dim)` is a coordinate along a mesh dimension
# (the rank within a data-parallel or tensor-parallel group), not the node-local rank.
DEVICE_MESH_BUILDERS = frozenset(
    {
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.device_mesh.DeviceMesh",
        "torch.distributed.DeviceMesh",
    }
)
MESH_NAME = re.compile(r"(^|_)(device_)?mesh(_|$)")
NODE_RANK_ENV = frozenset({"GROUP_RANK", "NODE_RANK", "SLURM_NODEID"})
RANK_ENV = GLOBAL_RANK_ENV | LOCAL_RANK_ENV | NODE_RANK_ENV
WORLD_SIZE_ENV = frozenset({"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})

# How code names per-process values: `rank` after words that say which rank
# (`distributed_rank`, `self._rank`, `get_data_parallel_rank()`); not a model-parallel,
# tensor-parallel or LoRA rank.
_RANK_WORDS = r"(?:(?:local|global|node|ddp|dp|data_parallel|process|world|dist|distributed|my)_)"
RANK_FUNCTION = re.compile(rf"^_*(get_)?{_RANK_WORDS}*rank$")
RANK_NAME = re.compile(rf"^_*{_RANK_WORDS}*rank(_id)?$|^gpu_id$")
WORLD_SIZE_FUNCTION = re.compile(r"^(get_)?world_size$")
WORLD_SIZE_NAME = re.compile(r"(^|_)world_size$|^num_(replicas|processes|gpus_total)$")
# `is_main_process()`, `self.is_master`, `master_process`, `trainer.is_global_zero`, ...;
# `is_main_worker`, but not `main_worker`: the worker function every process runs (the
# ImageNet example's `main_worker(gpu, ngpus_per_node, args)`).
MAIN_PROCESS_NAME = re.compile(
    r"^(is_)?((global|world|dist|distributed|ddp|dp|data_parallel)_)?(main|master|primary|chief)"
    r"(_process|_proc|_rank)?$|^is_rank_?(zero|0)$"
    r"|^is_((global|world|dist|distributed|ddp|dp|data_parallel)_)?(main|master|primary|chief)_worker$"
    r"|^is_global_zero$|^is_local_(main|master)(_process)?$|^rank_?(zero|0)(_only)?$"
    r"|^is_local_zero$"
)
# Decorators that run the function on the main process only.
MAIN_ONLY_DECORATOR = re.compile(
    r"^(rank_?(zero|0)_only|(master|main)(_process)?_only|on_(local_)?main_process"
    r"|only_(on_)?(rank_?(zero|0)|main|master)(_process)?|one_rank_only)$"
)
# Names of flags saying the job is (not) distributed: mode checks, not rank tests.
DISTRIBUTED_FLAG = ("distribute", "ddp", "is_initialized", "is_dist_avail_and_initialized")
UNWRAP_FUNCTION = re.compile(r"unwrap|de_?parallel|without_ddp|get_model|bare_model")

# Gradient clipping.
CLIP_FUNCTIONS = frozenset(
    {
        "torch.nn.utils.clip_grad_norm_",
        "torch.nn.utils.clip_grad_value_",
        "torch.nn.utils.clip_grad_norm",
    }
)

# Mixed precision.
GRAD_SCALERS = frozenset({"torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.GradScaler"})
# autocast entry points whose `dtype` is the second parameter
AUTOCASTS = frozenset(
    {
        "torch.autocast",
        "torch.amp.autocast",
        "torch.cuda.amp.autocast",
        "torch.amp.autocast_mode.autocast",
    }
)

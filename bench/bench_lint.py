"""Speed benchmark: ddplint against a bare LibCST parse and against TorchFix 0.7.0.

The script generates a deterministic, realistic mixed repository (ordinary library
modules: models, layers, utils, data transforms, configs, tests; and about 10 % DDP
training scripts and distributed helpers, some with real pitfalls), then times, in one
run and with medians over `--repeat` runs:

* the bare floor: one process reading every file and calling `libcst.parse_module`;
* `ddplint check --no-cache` with the default jobs (one per core) and with `--jobs 1`;
* `ddplint check` with a warm cache (populated once first);
* TorchFix 0.7.0 (`torchfix PATH`, its default checks), installed in its own virtualenv
  (`bench/_generated/.venv-torchfix`) so that its libcst pin cannot disturb ours.

Every tool runs as a subprocess, so every figure includes interpreter start-up.

    .venv/bin/python bench/bench_lint.py                 # 2,000 files, 5 repeats
    .venv/bin/python bench/bench_lint.py --files 500 --repeat 3 --skip-torchfix
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
GENERATED = HERE / "_generated"
TORCHFIX_VENV = GENERATED / ".venv-torchfix"
TORCHFIX_PIN = "torchfix==0.7.0"
MARKER = ".ddplint-bench"

# --------------------------------------------------------------------------------------
# Vocabulary for names: files and identifiers differ from file to file.
# --------------------------------------------------------------------------------------


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


NOUNS = _words(
    """
    conv attn mlp block stem head patch embed norm pool gate mixer proj token window
    residual bottleneck squeeze excite dense sparse cross local global stage layer
    encoder decoder adapter router expert prompt query key value feature anchor grid
    kernel filter spectrum channel spatial temporal frame clip audio pixel voxel mask
    crop flip jitter blur noise scale shift cutout mixup label sample batch loader cache
    meter logger timer schedule warmup decay optimizer metric score summary
    """
)
ADJECTIVES = _words(
    """
    fast deep wide light tiny small base large huge dual multi single shared gated
    dilated grouped separable inverted linear cosine relative absolute learned fixed
    random soft hard smooth robust efficient compact hybrid
    """
)
DOMAINS = _words(
    """
    vision text audio video detection segmentation retrieval speech tabular graph
    """
)
ACTIVATIONS = ("nn.GELU", "nn.ReLU", "nn.SiLU", "nn.Hardswish", "nn.Mish", "nn.Tanh")
NORMS = ("nn.LayerNorm", "nn.BatchNorm2d", "nn.GroupNorm", "nn.InstanceNorm2d")
TORCH_OPS = (
    "torch.cat([{a}, {b}], dim=1)",
    "torch.stack([{a}, {b}], dim=0).mean(0)",
    "torch.matmul({a}, {b}.transpose(-2, -1))",
    "torch.einsum('bnd,bmd->bnm', {a}, {b})",
    "torch.where({a} > 0, {a}, {b})",
    "torch.clamp({a} + {b}, min=-1.0, max=1.0)",
    "F.softmax({a} * self.scale, dim=-1)",
    "F.dropout({a}, p=self.drop_rate, training=self.training)",
    "F.layer_norm({a}, {a}.shape[-1:])",
    "F.interpolate({a}, scale_factor=2.0, mode='bilinear', align_corners=False)",
    "F.adaptive_avg_pool2d({a}, 1).flatten(1)",
    "{a}.flatten(2).transpose(1, 2)",
    "{a} * torch.sigmoid({b})",
    "{a} + self.gamma * {b}",
)


def _snake(rng: random.Random, parts: int = 2) -> str:
    words = [rng.choice(ADJECTIVES)] if rng.random() < 0.4 else []
    words += rng.sample(NOUNS, parts)
    return "_".join(words)


def _camel(rng: random.Random, parts: int = 2) -> str:
    return "".join(w.capitalize() for w in _snake(rng, parts).split("_"))


def _var(rng: random.Random) -> str:
    return rng.choice(("x", "y", "h", "z", "out", "feat", "hidden", "tokens", "logits", "attn"))


def _docstring(rng: random.Random, subject: str, indent: str, args: Sequence[str] = ()) -> str:
    """A Google-style docstring of varied length."""
    first = rng.choice(
        (
            f"Apply the {subject} transformation.",
            f"Compute the {subject} for a batch of inputs.",
            f"Build the {subject} used by the {rng.choice(DOMAINS)} models.",
            f"Return the {subject}, following the reference implementation.",
            f"Helper around {subject}; kept small so it can be scripted.",
        )
    )
    lines = [f'{indent}"""{first}']
    if rng.random() < 0.6:
        body = (
            f"This follows the usual {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} recipe. "
            f"Shapes are kept as (batch, {rng.choice(NOUNS)}, channels) unless noted, and "
            f"the {rng.choice(NOUNS)} statistics are computed in float32 for stability."
        )
        lines.append("")
        lines += [indent + w for w in textwrap.wrap(body, 80)]
    if args and rng.random() < 0.7:
        lines += ["", f"{indent}Args:"]
        for arg in args:
            lines.append(f"{indent}    {arg}: the {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}.")
    if rng.random() < 0.4:
        lines += ["", f"{indent}Returns:", f"{indent}    The {_var(rng)} tensor."]
    lines.append(f'{indent}"""')
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Blocks of ordinary library code.
# --------------------------------------------------------------------------------------


def _forward_body(rng: random.Random, indent: str, steps: int) -> list[str]:
    out = []
    names = ["x"]
    for i in range(steps):
        a = rng.choice(names)
        b = rng.choice(names)
        new = f"{_var(rng)}{i}"
        choice = rng.random()
        if choice < 0.55:
            out.append(f"{indent}{new} = {rng.choice(TORCH_OPS).format(a=a, b=b)}")
        elif choice < 0.7:
            out.append(f"{indent}{new} = self.{rng.choice(('proj', 'norm', 'act', 'fc1'))}({a})")
        elif choice < 0.8:
            out.append(f"{indent}if self.{rng.choice(('use_skip', 'pre_norm', 'training'))}:")
            out.append(f"{indent}    {a} = {a} + self.drop_path({b})")
            out.append(f"{indent}{new} = {a}")
        elif choice < 0.9:
            out.append(f"{indent}B, N, C = {a}.shape")
            out.append(f"{indent}{new} = {a}.reshape(B, N, self.num_heads, C // self.num_heads)")
        else:
            out.append(f"{indent}# {rng.choice(NOUNS)}: keep the {rng.choice(NOUNS)} in fp32")
            out.append(f"{indent}{new} = {a}.float().to({b}.dtype)")
        names.append(new)
    out.append(f"{indent}return {names[-1]}")
    return out


def block_layer_class(rng: random.Random) -> str:
    name = _camel(rng)
    dim = rng.choice((64, 96, 128, 192, 256, 384, 512, 768))
    args = ["dim", "num_heads", "mlp_ratio", "drop_rate"]
    extra = rng.sample(
        ("qkv_bias", "layer_scale", "use_skip", "pre_norm", "eps"), rng.randint(0, 3)
    )
    lines = [
        f"class {name}(nn.Module):",
        _docstring(rng, name, "    ", args),
        "",
        "    def __init__(",
        "        self,",
        f"        dim: int = {dim},",
        f"        num_heads: int = {rng.choice((1, 2, 4, 8, 12, 16))},",
        f"        mlp_ratio: float = {rng.choice((2.0, 3.0, 4.0))},",
        f"        drop_rate: float = {rng.choice((0.0, 0.1, 0.2))},",
    ]
    for e in extra:
        lines.append(f"        {e}: bool = {rng.choice(('True', 'False'))},")
    lines += [
        f"        act_layer: type[nn.Module] = {rng.choice(ACTIVATIONS)},",
        f"        norm_layer: Callable[..., nn.Module] = {rng.choice(NORMS)},",
        "    ) -> None:",
        "        super().__init__()",
        "        self.num_heads = num_heads",
        "        self.scale = (dim // num_heads) ** -0.5",
        "        self.drop_rate = drop_rate",
        "        hidden = int(dim * mlp_ratio)",
        "        self.norm = norm_layer(dim)",
        "        self.proj = nn.Linear(dim, dim)",
        "        self.fc1 = nn.Linear(dim, hidden)",
        "        self.fc2 = nn.Linear(hidden, dim)",
        "        self.act = act_layer()",
        "        self.gamma = nn.Parameter(1e-5 * torch.ones(dim))",
        "        self.drop_path = nn.Identity() if drop_rate == 0.0 else nn.Dropout(drop_rate)",
    ]
    for e in extra:
        lines.append(f"        self.{e} = {e}")
    lines += ["        self.use_skip = getattr(self, 'use_skip', True)"]
    lines += ["        self.pre_norm = getattr(self, 'pre_norm', False)", ""]
    if rng.random() < 0.5:
        lines += [
            "    def init_weights(self) -> None:",
            "        for module in self.modules():",
            "            if isinstance(module, nn.Linear):",
            "                nn.init.trunc_normal_(module.weight, std=0.02)",
            "                if module.bias is not None:",
            "                    nn.init.zeros_(module.bias)",
            "            elif isinstance(module, (nn.LayerNorm, nn.GroupNorm)):",
            "                nn.init.ones_(module.weight)",
            "                nn.init.zeros_(module.bias)",
            "",
        ]
    lines += ["    def forward(self, x: torch.Tensor) -> torch.Tensor:"]
    if rng.random() < 0.5:
        lines.append(_docstring(rng, "forward pass", "        ", ["x"]))
    lines += _forward_body(rng, "        ", rng.randint(3, 14))
    if rng.random() < 0.4:
        lines += [
            "",
            "    def extra_repr(self) -> str:",
            "        return f'num_heads={self.num_heads}, scale={self.scale:.3f}'",
        ]
    return "\n".join(lines)


def block_model_class(rng: random.Random) -> str:
    name = _camel(rng, 1) + rng.choice(("Net", "Former", "Mixer", "ViT", "ResNet", "Encoder"))
    block = _camel(rng)
    depths = [rng.choice((1, 2, 3, 4, 6)) for _ in range(rng.randint(2, 4))]
    dims = [rng.choice((32, 48, 64, 96)) * 2**i for i in range(len(depths))]
    lines = [
        f"class {block}(nn.Module):",
        "    def __init__(self, dim: int, out_dim: int, stride: int = 1) -> None:",
        "        super().__init__()",
        "        self.conv1 = nn.Conv2d(dim, out_dim, 3, stride, 1, bias=False)",
        "        self.bn1 = nn.BatchNorm2d(out_dim)",
        "        self.conv2 = nn.Conv2d(out_dim, out_dim, 3, 1, 1, bias=False)",
        "        self.bn2 = nn.BatchNorm2d(out_dim)",
        f"        self.act = {rng.choice(ACTIVATIONS)}(inplace=True)"
        if rng.random() < 0.3
        else f"        self.act = {rng.choice(ACTIVATIONS)}()",
        "        self.shortcut: nn.Module = nn.Identity()",
        "        if stride != 1 or dim != out_dim:",
        "            self.shortcut = nn.Sequential(",
        "                nn.Conv2d(dim, out_dim, 1, stride, bias=False), nn.BatchNorm2d(out_dim)",
        "            )",
        "",
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:",
        "        shortcut = self.shortcut(x)",
        "        x = self.act(self.bn1(self.conv1(x)))",
        "        x = self.bn2(self.conv2(x))",
        "        return self.act(x + shortcut)",
        "",
        "",
        f"class {name}(nn.Module):",
        _docstring(rng, name, "    ", ["num_classes", "in_chans", "depths", "dims"]),
        "",
        "    def __init__(",
        "        self,",
        "        num_classes: int = 1000,",
        "        in_chans: int = 3,",
        f"        depths: Sequence[int] = {tuple(depths)},",
        f"        dims: Sequence[int] = {tuple(dims)},",
        f"        drop_rate: float = {rng.choice((0.0, 0.1, 0.3))},",
        "        global_pool: str = 'avg',",
        "    ) -> None:",
        "        super().__init__()",
        "        self.num_classes = num_classes",
        "        self.global_pool = global_pool",
        "        self.drop_rate = drop_rate",
        "        self.stem = nn.Sequential(",
        "            nn.Conv2d(in_chans, dims[0], kernel_size=4, stride=4),",
        "            nn.BatchNorm2d(dims[0]),",
        "        )",
        "        stages: list[nn.Module] = []",
        "        prev = dims[0]",
        "        for i, (depth, dim) in enumerate(zip(depths, dims)):",
        "            blocks = [",
        f"                {block}(prev if j == 0 else dim, dim, stride=2 if (i and not j) else 1)",
        "                for j in range(depth)",
        "            ]",
        "            stages.append(nn.Sequential(*blocks))",
        "            prev = dim",
        "        self.stages = nn.Sequential(*stages)",
        "        self.num_features = prev",
        "        self.head = nn.Linear(prev, num_classes) if num_classes else nn.Identity()",
        "",
        "    @torch.jit.ignore",
        "    def group_matcher(self, coarse: bool = False) -> dict[str, Any]:",
        "        return dict(stem=r'^stem', blocks=r'^stages\\.(\\d+)' if coarse else r'^stages')",
        "",
        "    def reset_classifier(self, num_classes: int, global_pool: str | None = None) -> None:",
        "        self.num_classes = num_classes",
        "        if global_pool is not None:",
        "            self.global_pool = global_pool",
        "        self.head = (",
        "            nn.Linear(self.num_features, num_classes) if num_classes else nn.Identity()",
        "        )",
        "",
        "    def forward_features(self, x: torch.Tensor) -> torch.Tensor:",
        "        x = self.stem(x)",
        "        return self.stages(x)",
        "",
        "    def forward_head(self, x: torch.Tensor, pre_logits: bool = False) -> torch.Tensor:",
        "        if self.global_pool == 'avg':",
        "            x = x.mean(dim=(2, 3))",
        "        elif self.global_pool == 'max':",
        "            x = torch.amax(x, dim=(2, 3))",
        "        x = F.dropout(x, p=self.drop_rate, training=self.training)",
        "        return x if pre_logits else self.head(x)",
        "",
        "    def forward(self, x: torch.Tensor) -> torch.Tensor:",
        "        return self.forward_head(self.forward_features(x))",
        "",
        "",
        f"def _create_{name.lower()}(variant: str, pretrained: bool = False, **kwargs: Any)"
        f" -> {name}:",
        f"    model = {name}(**kwargs)",
        "    if pretrained:",
        "        state = torch.load(_checkpoint_path(variant), map_location='cpu')",
        "        model.load_state_dict(state, strict=False)",
        "    return model",
    ]
    for size in rng.sample(("tiny", "small", "base", "large"), rng.randint(1, 4)):
        scale = {"tiny": 0.5, "small": 0.75, "base": 1.0, "large": 1.5}[size]
        scaled = tuple(int(d * scale) for d in dims)
        lines += [
            "",
            "",
            "@register_model",
            f"def {name.lower()}_{size}(pretrained: bool = False, **kwargs: Any) -> {name}:",
            f'    """{name} {size}: {sum(depths)} blocks, widths {scaled}."""',
            f"    args = dict(depths={tuple(depths)}, dims={scaled})",
            f"    return _create_{name.lower()}('{name.lower()}_{size}', pretrained, **dict(args,"
            " **kwargs))",
        ]
    return "\n".join(lines)


def block_util_function(rng: random.Random) -> str:
    name = _snake(rng)
    kind = rng.randrange(8)
    if kind == 0:
        return "\n".join(
            [
                f"def {name}(values: Iterable[float], weights: Iterable[float] | None = None)"
                " -> float:",
                _docstring(rng, name, "    ", ["values", "weights"]),
                "    values = list(values)",
                "    if not values:",
                "        return 0.0",
                "    if weights is None:",
                "        return sum(values) / len(values)",
                "    weights = list(weights)",
                "    total = sum(weights)",
                "    return sum(v * w for v, w in zip(values, weights)) / max(total, 1e-12)",
            ]
        )
    if kind == 1:
        cls = _camel(rng) + "Meter"
        return "\n".join(
            [
                f"class {cls}:",
                f'    """Keeps the running mean of the {rng.choice(NOUNS)} {rng.choice(NOUNS)}."""',
                "",
                "    def __init__(self, name: str = '', fmt: str = ':.4f') -> None:",
                "        self.name = name",
                "        self.fmt = fmt",
                "        self.reset()",
                "",
                "    def reset(self) -> None:",
                "        self.val = 0.0",
                "        self.avg = 0.0",
                "        self.sum = 0.0",
                "        self.count = 0",
                "",
                "    def update(self, val: float, n: int = 1) -> None:",
                "        self.val = val",
                "        self.sum += val * n",
                "        self.count += n",
                "        self.avg = self.sum / self.count",
                "",
                "    def __str__(self) -> str:",
                "        fmtstr = '{name} {val' + self.fmt + '} ({avg' + self.fmt + '})'",
                "        return fmtstr.format(**self.__dict__)",
            ]
        )
    if kind == 2:
        return "\n".join(
            [
                f"def {name}(path: str | os.PathLike[str], model: nn.Module, strict: bool = True)"
                " -> dict[str, Any]:",
                _docstring(rng, f"checkpoint {name}", "    ", ["path", "model", "strict"]),
                "    checkpoint = torch.load(path, map_location='cpu')",
                "    state = checkpoint.get('state_dict', checkpoint)",
                "    cleaned = {}",
                "    for key, value in state.items():",
                "        if key.startswith('module.'):",
                "            key = key[len('module.'):]",
                "        cleaned[key] = value",
                "    missing, unexpected = model.load_state_dict(cleaned, strict=strict)",
                "    if missing or unexpected:",
                f"        _logger.warning('{name}: missing=%s unexpected=%s', missing, unexpected)",
                "    return {k: v for k, v in checkpoint.items() if k != 'state_dict'}",
            ]
        )
    if kind == 3:
        return "\n".join(
            [
                f"def {name}(x: Any, n: int = 2) -> tuple[Any, ...]:",
                f'    """Repeat `x` {rng.choice(("n", "two", "several"))} times unless'
                ' it is already iterable."""',
                "    if isinstance(x, Iterable) and not isinstance(x, str):",
                "        return tuple(x)",
                "    return tuple(repeat(x, n))",
            ]
        )
    if kind == 4:
        return "\n".join(
            [
                f"def {name}(config: Mapping[str, Any], overrides: Mapping[str, Any])"
                " -> dict[str, Any]:",
                _docstring(rng, name, "    ", ["config", "overrides"]),
                "    merged: dict[str, Any] = dict(config)",
                "    for key, value in overrides.items():",
                "        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):",
                f"            merged[key] = {name}(merged[key], value)",
                "        elif value is not None:",
                "            merged[key] = value",
                "    return merged",
            ]
        )
    if kind == 5:
        return "\n".join(
            [
                f"def {name}(",
                "    optimizer: torch.optim.Optimizer,",
                f"    warmup_steps: int = {rng.choice((500, 1000, 2000))},",
                "    total_steps: int = 100_000,",
                f"    min_lr_ratio: float = {rng.choice((0.0, 0.01, 0.1))},",
                ") -> torch.optim.lr_scheduler.LambdaLR:",
                _docstring(rng, "cosine schedule with warmup", "    ", ["optimizer"]),
                "",
                "    def lr_lambda(step: int) -> float:",
                "        if step < warmup_steps:",
                "            return step / max(1, warmup_steps)",
                "        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)",
                "        cosine = 0.5 * (1.0 + math.cos(math.pi * min(progress, 1.0)))",
                "        return min_lr_ratio + (1.0 - min_lr_ratio) * cosine",
                "",
                "    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)",
            ]
        )
    if kind == 6:
        return "\n".join(
            [
                f"def {name}(root: Path, suffixes: Sequence[str] = ('.jpg', '.png'))"
                " -> list[Path]:",
                f'    """List the {rng.choice(NOUNS)} files below `root`, sorted."""',
                "    found = []",
                "    for dirpath, _, filenames in os.walk(root):",
                "        for filename in filenames:",
                "            if filename.lower().endswith(tuple(suffixes)):",
                "                found.append(Path(dirpath) / filename)",
                "    found.sort()",
                "    _logger.info('found %d files under %s', len(found), root)",
                "    return found",
            ]
        )
    return "\n".join(
        [
            "@torch.no_grad()",
            f"def {name}(output: torch.Tensor, target: torch.Tensor, topk: Sequence[int] = (1, 5))"
            " -> list[float]:",
            _docstring(rng, "top-k accuracy", "    ", ["output", "target", "topk"]),
            "    maxk = min(max(topk), output.size(1))",
            "    batch_size = target.size(0)",
            "    _, pred = output.topk(maxk, 1, True, True)",
            "    pred = pred.t()",
            "    correct = pred.eq(target.reshape(1, -1).expand_as(pred))",
            "    return [",
            "        correct[: min(k, maxk)].reshape(-1).float().sum(0).item() * 100.0"
            " / batch_size",
            "        for k in topk",
            "    ]",
        ]
    )


def block_transform(rng: random.Random) -> str:
    name = _camel(rng) + rng.choice(("Transform", "Augment", "Collate", ""))
    p = rng.choice((0.1, 0.25, 0.5, 0.8))
    lines = [
        f"class {name}:",
        _docstring(rng, name, "    ", ["p", "size"]),
        "",
        f"    def __init__(self, p: float = {p}, size: int | tuple[int, int] = "
        f"{rng.choice((160, 224, 256, 384))}) -> None:",
        "        self.p = p",
        "        self.size = size if isinstance(size, tuple) else (size, size)",
        "",
        "    def __call__(self, img: torch.Tensor, target: torch.Tensor | None = None) -> Any:",
        "        if random.random() > self.p:",
        "            return img if target is None else (img, target)",
    ]
    ops = [
        "        img = torch.flip(img, dims=[-1])",
        "        img = img + torch.randn_like(img) * 0.05",
        "        h, w = img.shape[-2:]",
        "        top = random.randint(0, max(0, h - self.size[0]))",
        "        left = random.randint(0, max(0, w - self.size[1]))",
        "        img = img[..., top : top + self.size[0], left : left + self.size[1]]",
        "        img = (img - img.mean()) / (img.std() + 1e-6)",
        "        lam = float(np.random.beta(1.0, 1.0))",
        "        img = lam * img + (1.0 - lam) * img.roll(1, dims=0)",
        "        img = img.clamp_(0.0, 1.0)",
    ]
    lines += rng.sample(ops, rng.randint(3, len(ops)))
    lines += [
        "        return img if target is None else (img, target)",
        "",
        "    def __repr__(self) -> str:",
        "        return f'{self.__class__.__name__}(p={self.p}, size={self.size})'",
    ]
    return "\n".join(lines)


def block_config(rng: random.Random) -> str:
    name = _camel(rng) + "Config"
    fields = []
    for _ in range(rng.randint(4, 16)):
        fname = _snake(rng, 1) + "_" + rng.choice(("size", "rate", "steps", "dim", "name", "path"))
        value = rng.choice(
            (
                str(rng.randint(1, 4096)),
                f"{rng.random():.3f}",
                f"'{rng.choice(NOUNS)}'",
                "field(default_factory=list)",
                "None",
                "True",
            )
        )
        typ = {
            "'": "str",
            "f": "list[str]",
            "N": "str | None",
            "T": "bool",
        }.get(value[0], "float" if "." in value else "int")
        fields.append(f"    {fname}: {typ} = {value}")
    fields = list(dict.fromkeys(fields))
    return "\n".join(
        [
            "@dataclass",
            f"class {name}:",
            f'    """Settings for the {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} '
            f'{rng.choice(("experiments", "runs", "pipeline", "stage"))}."""',
            "",
            *fields,
            "",
            "    @classmethod",
            "    def from_dict(cls, data: Mapping[str, Any]) -> " + f"{name}:",
            "        known = {f.name for f in fields(cls)}",
            "        return cls(**{k: v for k, v in data.items() if k in known})",
            "",
            "    def to_dict(self) -> dict[str, Any]:",
            "        return asdict(self)",
        ]
    )


def block_test(rng: random.Random) -> str:
    name = _snake(rng)
    kind = rng.randrange(3)
    if kind == 0:
        return "\n".join(
            [
                "@pytest.mark.parametrize('batch_size', [1, 2, 8])",
                f"@pytest.mark.parametrize('dim', [{rng.choice((16, 32))}, 64])",
                f"def test_{name}_shapes(batch_size: int, dim: int) -> None:",
                f"    x = torch.randn(batch_size, {rng.randint(4, 64)}, dim)",
                "    layer = nn.Linear(dim, dim)",
                "    y = layer(x)",
                "    assert y.shape == x.shape",
                "    assert torch.isfinite(y).all()",
            ]
        )
    if kind == 1:
        return "\n".join(
            [
                "@pytest.fixture",
                f"def {name}_model() -> nn.Module:",
                "    torch.manual_seed(0)",
                f"    return nn.Sequential(nn.Linear(8, {rng.choice((16, 32))}), nn.ReLU(),"
                " nn.LazyLinear(2))",
                "",
                "",
                f"def test_{name}_backward({name}_model: nn.Module) -> None:",
                "    x = torch.randn(4, 8, requires_grad=True)",
                f"    loss = {name}_model(x).sum()",
                "    loss.backward()",
                "    assert x.grad is not None",
                f"    assert x.grad.abs().sum() > 0, 'no gradient reached the {rng.choice(NOUNS)}'",
            ]
        )
    return "\n".join(
        [
            f"def test_{name}_roundtrip(tmp_path: Path) -> None:",
            f'    """Saving and loading keeps every {rng.choice(NOUNS)} parameter."""',
            "    model = nn.Linear(3, 3)",
            "    path = tmp_path / 'model.pt'",
            "    torch.save(model.state_dict(), path)",
            "    restored = nn.Linear(3, 3)",
            "    restored.load_state_dict(torch.load(path))",
            "    for a, b in zip(model.parameters(), restored.parameters()):",
            "        assert torch.equal(a, b)",
        ]
    )


LIB_HEADER = """\
from __future__ import annotations

import logging
import math
import os
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from {pkg}.registry import register_model
from {pkg}.hub import checkpoint_path as _checkpoint_path

_logger = logging.getLogger(__name__)

__all__ = [{exports}]
"""

CONFIG_HEADER = """\
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any
"""

TEST_HEADER = """\
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from {pkg}.{sub} import *  # noqa: F403
"""


# --------------------------------------------------------------------------------------
# Blocks of DDP code: training scripts and distributed helpers, some with pitfalls.
# --------------------------------------------------------------------------------------

DDP_HEADER = """\
import argparse
import logging
import math
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from {pkg}.models import create_model
from {pkg}.utils.metrics import accuracy

_logger = logging.getLogger(__name__)
"""


def ddp_setup(rng: random.Random) -> str:
    backend = rng.choice(("'nccl'", "'gloo'", "args.dist_backend"))
    env_rank = rng.choice(("LOCAL_RANK", "RANK"))
    lines = [
        "def setup_distributed(args: argparse.Namespace) -> int:",
        '    """Initialise the default process group from the torchrun environment."""',
        f"    local_rank = int(os.environ.get('{env_rank}', 0))",
        "    args.world_size = int(os.environ.get('WORLD_SIZE', 1))",
        "    args.distributed = args.world_size > 1",
        "    if args.distributed:",
        "        torch.cuda.set_device(local_rank)"
        if rng.random() < 0.85
        else "        pass  # device picked later",
        f"        dist.init_process_group(backend={backend}, init_method='env://')",
        "        args.rank = dist.get_rank()",
        "    else:",
        "        args.rank = 0",
        "    return local_rank",
        "",
        "",
        "def cleanup() -> None:",
        "    if dist.is_available() and dist.is_initialized():",
        "        dist.destroy_process_group()",
    ]
    return "\n".join(lines)


def ddp_helpers(rng: random.Random) -> str:
    return "\n".join(
        [
            "def get_rank() -> int:",
            "    if not dist.is_available() or not dist.is_initialized():",
            "        return 0",
            "    return dist.get_rank()",
            "",
            "",
            "def get_world_size() -> int:",
            "    if not dist.is_available() or not dist.is_initialized():",
            "        return 1",
            "    return dist.get_world_size()",
            "",
            "",
            "def is_main_process() -> bool:",
            "    return get_rank() == 0",
            "",
            "",
            "def save_on_master(*args, **kwargs) -> None:",
            "    if is_main_process():",
            "        torch.save(*args, **kwargs)",
            "",
            "",
            "def reduce_tensor(tensor: torch.Tensor, average: bool = True) -> torch.Tensor:",
            '    """Sum (or average) `tensor` over every rank."""',
            "    rt = tensor.clone()",
            "    dist.all_reduce(rt, op=dist.ReduceOp.SUM)",
            "    if average:",
            "        rt /= get_world_size()" if rng.random() < 0.8 else "        pass",
            "    return rt",
        ]
    )


def ddp_dataset(rng: random.Random) -> tuple[str, str]:
    name = _camel(rng) + "Dataset"
    return name, "\n".join(
        [
            f"class {name}(Dataset):",
            f'    """Synthetic {rng.choice(DOMAINS)} samples, enough to exercise the loop."""',
            "",
            f"    def __init__(self, length: int = {rng.choice((1024, 4096, 50_000))}) -> None:",
            "        self.length = length",
            "",
            "    def __len__(self) -> int:",
            "        return self.length",
            "",
            "    def __getitem__(self, index: int) -> tuple[torch.Tensor, int]:",
            "        g = torch.Generator().manual_seed(index)",
            f"        return torch.randn(3, {rng.choice((32, 64, 224))}, "
            f"{rng.choice((32, 64, 224))}, generator=g), index % {rng.choice((10, 100, 1000))}",
        ]
    )


def ddp_train(rng: random.Random, dataset: str) -> str:
    forget_set_epoch = rng.random() < 0.3
    unguarded_save = rng.random() < 0.3
    shuffle_with_sampler = rng.random() < 0.15
    no_device_ids = rng.random() < 0.2
    use_no_sync = rng.random() < 0.4
    lines = [
        "def train(args: argparse.Namespace) -> None:",
        "    local_rank = setup_distributed(args)",
        "    device = torch.device('cuda', local_rank)",
        f"    model = create_model(args.model, num_classes={rng.choice((10, 100, 1000))})",
        "    model.to(device)",
    ]
    if rng.random() < 0.5:
        lines.append("    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)")
    lines.append(
        "    model = DDP(model)"
        if no_device_ids
        else "    model = DDP(model, device_ids=[local_rank])"
    )
    lines += [
        f"    dataset = {dataset}()",
        "    sampler = DistributedSampler(dataset) if args.distributed else None",
        "    loader = DataLoader(",
        "        dataset,",
        "        batch_size=args.batch_size,",
        "        sampler=sampler,",
        "        shuffle=True," if shuffle_with_sampler else "        shuffle=sampler is None,",
        f"        num_workers={rng.choice((2, 4, 8))},",
        "        pin_memory=True,",
        "        drop_last=True,",
        "    )",
        "    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.05)",
        "    scaler = torch.cuda.amp.GradScaler()",
        "    for epoch in range(args.epochs):",
    ]
    if not forget_set_epoch:
        lines += ["        if sampler is not None:", "            sampler.set_epoch(epoch)"]
    lines += ["        model.train()", "        start = time.time()"]
    if use_no_sync:
        lines += [
            "        for step, (images, targets) in enumerate(loader):",
            "            images = images.to(device, non_blocking=True)",
            "            targets = targets.to(device, non_blocking=True)",
            "            accumulate = (step + 1) % args.accum_steps != 0",
            "            if accumulate:",
            "                with model.no_sync():",
            "                    with torch.autocast('cuda', dtype=torch.bfloat16):",
            "                        loss = F.cross_entropy(model(images), targets)",
            "                    scaler.scale(loss / args.accum_steps).backward()",
            "                continue",
            "            with torch.autocast('cuda', dtype=torch.bfloat16):",
            "                loss = F.cross_entropy(model(images), targets)",
            "            scaler.scale(loss / args.accum_steps).backward()",
            "            scaler.step(optimizer)",
            "            scaler.update()",
            "            optimizer.zero_grad(set_to_none=True)",
        ]
    else:
        lines += [
            "        for step, (images, targets) in enumerate(loader):",
            "            images, targets = images.to(device), targets.to(device)",
            "            loss = F.cross_entropy(model(images), targets)",
            "            optimizer.zero_grad()",
            "            loss.backward()",
            "            optimizer.step()",
        ]
    lines += [
        "            if step % args.log_interval == 0:",
        "                reduced = reduce_tensor(loss.detach())",
        "                if args.rank == 0:",
        "                    _logger.info(",
        "                        'epoch %d step %d loss %.4f', epoch, step, reduced.item()",
        "                    )",
        "        _logger.info('epoch %d took %.1fs', epoch, time.time() - start)",
        "        acc = evaluate(model, loader, device)",
    ]
    if unguarded_save:
        lines += [
            "        torch.save(model.state_dict(), Path(args.output) / f'epoch{epoch}.pt')",
        ]
    else:
        lines += [
            "        if args.rank == 0:",
            "            state = {'model': model.module.state_dict(), 'epoch': epoch, 'acc': acc}",
            "            torch.save(state, Path(args.output) / f'epoch{epoch}.pt')",
        ]
        if rng.random() < 0.5:
            lines += ["        dist.barrier()"]
    lines += ["    cleanup()"]
    return "\n".join(lines)


def ddp_evaluate(rng: random.Random) -> str:
    return "\n".join(
        [
            "@torch.no_grad()",
            "def evaluate(model: nn.Module, loader: DataLoader, device: torch.device) -> float:",
            "    model.eval()",
            "    correct = torch.zeros(2, device=device)",
            "    for images, targets in loader:",
            "        images, targets = images.to(device), targets.to(device)",
            "        pred = model(images).argmax(dim=1)",
            "        correct[0] += (pred == targets).sum()",
            "        correct[1] += targets.numel()",
            "    dist.all_reduce(correct)" if rng.random() < 0.8 else "    pass",
            "    return (correct[0] / correct[1]).item()",
        ]
    )


def ddp_main(rng: random.Random) -> str:
    return "\n".join(
        [
            "def parse_args() -> argparse.Namespace:",
            f"    parser = argparse.ArgumentParser(description='{rng.choice(DOMAINS)} training')",
            f"    parser.add_argument('--model', default='{_snake(rng)}')",
            "    parser.add_argument("
            f"'--batch-size', type=int, default={rng.choice((32, 64, 128))})",
            f"    parser.add_argument('--lr', type=float, default={rng.choice((1e-3, 3e-4))})",
            f"    parser.add_argument('--epochs', type=int, default={rng.choice((10, 90, 300))})",
            "    parser.add_argument('--accum-steps', type=int, default=1)",
            "    parser.add_argument('--log-interval', type=int, default=50)",
            "    parser.add_argument('--dist-backend', default='nccl')",
            "    parser.add_argument('--output', default='./output')",
            "    return parser.parse_args()",
            "",
            "",
            "def main() -> None:",
            "    logging.basicConfig(level=logging.INFO)",
            "    train(parse_args())",
            "",
            "",
            "if __name__ == '__main__':",
            "    main()",
        ]
    )


# --------------------------------------------------------------------------------------
# Files.
# --------------------------------------------------------------------------------------


@dataclass
class Plan:
    relpath: str
    kind: str
    target_lines: int


def _target_lines(rng: random.Random, kind: str) -> int:
    low, mode, high = {
        "model": (120, 380, 600),
        "layer": (60, 220, 600),
        "util": (50, 160, 500),
        "transform": (50, 180, 450),
        "config": (50, 90, 250),
        "test": (50, 110, 350),
        "ddp_script": (120, 220, 450),
        "ddp_helper": (60, 120, 300),
    }[kind]
    return int(rng.triangular(low, high, mode))


def _module_docstring(rng: random.Random, kind: str, stem: str) -> str:
    topic = stem.replace("_", " ")
    text = (
        f"{topic.capitalize()}: {kind} code for the {rng.choice(ADJECTIVES)} "
        f"{rng.choice(DOMAINS)} models. Adapted for this code base; the "
        f"{rng.choice(NOUNS)} and {rng.choice(NOUNS)} handling differ from the paper."
    )
    return '"""' + "\n".join(textwrap.wrap(text, 88)) + '\n"""\n'


def _fill(rng: random.Random, makers: Sequence[Callable[[random.Random], str]], target: int) -> str:
    blocks: list[str] = []
    total = 0
    while total < target:
        block = rng.choice(makers)(rng)
        blocks.append(block)
        total += block.count("\n") + 3
    return "\n\n\n".join(blocks)


# Ordinary modules that happen to mention a prefilter word ("distributed", "world_size"...),
# as real library code does in docstrings and signatures.
_INCIDENTAL = (
    "# Note: under distributed training this runs once per process.\n",
    "def scaled_lr(base_lr: float, batch_size: int, world_size: int = 1) -> float:\n"
    "    return base_lr * batch_size * world_size / 256\n",
    "def _barrier_free(x: torch.Tensor) -> torch.Tensor:\n    return x.contiguous()\n",
)


def render(plan: Plan, pkg: str, rng: random.Random) -> str:
    stem = Path(plan.relpath).stem
    doc = _module_docstring(rng, plan.kind, stem)
    target = plan.target_lines
    if plan.kind in ("ddp_script", "ddp_helper"):
        head = doc + "\n" + DDP_HEADER.format(pkg=pkg) + "\n\n"
        parts = [ddp_helpers(rng), ddp_setup(rng)]
        if plan.kind == "ddp_script":
            dataset_name, dataset = ddp_dataset(rng)
            parts.append(dataset)
            parts += [ddp_evaluate(rng), ddp_train(rng, dataset_name)]
        used = sum(p.count("\n") + 3 for p in parts) + head.count("\n")
        extra = _fill(rng, (block_util_function, block_layer_class), max(0, target - used - 25))
        if extra and rng.random() < 0.7:
            parts.insert(1, extra)
        if plan.kind == "ddp_script":
            parts.append(ddp_main(rng))
        return head + "\n\n\n".join(parts) + "\n"
    if plan.kind == "config":
        return doc + "\n" + CONFIG_HEADER + "\n\n" + _fill(rng, (block_config,), target) + "\n"
    if plan.kind == "test":
        sub = rng.choice(("layers", "models", "utils", "data"))
        body = _fill(rng, (block_test,), target)
        return doc + "\n" + TEST_HEADER.format(pkg=pkg, sub=sub) + "\n\n" + body + "\n"
    makers: dict[str, tuple[Callable[[random.Random], str], ...]] = {
        "model": (block_model_class, block_layer_class, block_util_function),
        "layer": (block_layer_class, block_layer_class, block_util_function),
        "util": (block_util_function,),
        "transform": (block_transform, block_util_function),
    }
    body = _fill(rng, makers[plan.kind], target - 25)
    if rng.random() < 0.05:
        body = rng.choice(_INCIDENTAL) + "\n\n" + body
    exports = ", ".join(
        repr(line.split()[1].split("(")[0].rstrip(":"))
        for line in body.splitlines()
        if line.startswith(("class ", "def ")) and not line.split()[1].startswith("_")
    )
    return doc + "\n" + LIB_HEADER.format(pkg=pkg, exports=exports) + "\n\n" + body + "\n"


def plan_repository(files: int, seed: int) -> list[Plan]:
    """A layout like a real project: several packages, tests, and a scripts folder."""
    rng = random.Random(seed)
    weights = {
        "model": 18,
        "layer": 22,
        "util": 17,
        "transform": 10,
        "config": 8,
        "test": 15,
        "ddp_script": 6,
        "ddp_helper": 4,
    }
    kinds = list(weights)
    plans: list[Plan] = []
    seen: set[str] = set()
    packages = [f"{rng.choice(ADJECTIVES)}{rng.choice(NOUNS)}" for _ in range(max(1, files // 400))]
    while len(plans) < files:
        kind = rng.choices(kinds, weights=[weights[k] for k in kinds])[0]
        pkg = rng.choice(packages)
        stem = _snake(rng)
        folder = {
            "model": f"src/{pkg}/models",
            "layer": f"src/{pkg}/layers",
            "util": f"src/{pkg}/utils",
            "transform": f"src/{pkg}/data",
            "config": f"src/{pkg}/configs",
            "test": f"tests/{pkg}",
            "ddp_script": rng.choice(("scripts", "tools", f"projects/{stem.split('_')[0]}")),
            "ddp_helper": f"src/{pkg}/distributed",
        }[kind]
        if kind == "test":
            stem = "test_" + stem
        elif kind == "ddp_script":
            stem = rng.choice(("train_", "finetune_", "pretrain_", "eval_")) + stem
        elif kind == "ddp_helper":
            stem = rng.choice(("dist_", "comm_", "launch_", "")) + stem
        relpath = f"{folder}/{stem}.py"
        if relpath in seen:
            continue
        seen.add(relpath)
        plans.append(Plan(relpath, kind, _target_lines(rng, kind)))
    return plans


def generate(root: Path, files: int, seed: int) -> list[Path]:
    """Write the repository under `root`; return its .py files, sorted."""
    if root.exists() and any(root.iterdir()):
        if not (root / MARKER).exists():
            sys.exit(f"{root} is not empty and was not made by this script; choose another --out")
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / MARKER).write_text("generated by bench/bench_lint.py; deleted on the next run\n")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "generated-bench-repo"\nversion = "0.0.0"\n'
    )
    plans = plan_repository(files, seed)
    for index, plan in enumerate(plans):
        rng = random.Random(f"{seed}:{index}:{plan.relpath}")
        pkg = plan.relpath.split("/")[1] if plan.relpath.startswith("src/") else "benchpkg"
        path = root / plan.relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(plan, pkg, rng))
    return sorted(root.rglob("*.py"))


# --------------------------------------------------------------------------------------
# Measuring.
# --------------------------------------------------------------------------------------


def bare_parse(list_file: str) -> None:
    """Child-process mode: read and parse every listed file, one process, print seconds."""
    import libcst

    paths = Path(list_file).read_text().splitlines()
    start = time.perf_counter()
    failures = 0
    for name in paths:
        try:
            libcst.parse_module(Path(name).read_bytes())
        except libcst.ParserSyntaxError:
            failures += 1
    print(json.dumps({"loop_s": time.perf_counter() - start, "failures": failures}))


@dataclass
class Measure:
    tool: str
    files: int
    lines: int
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def lines_per_s(self) -> float:
        return self.lines / self.median

    @property
    def cpu_per_line(self) -> float:
        return statistics.median(self.cpu_seconds) / self.lines


def timed(command: Sequence[str], cwd: Path, ok: Sequence[int] = (0,)) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of the command and the worker processes it
    waited for) and output of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in ok:
        sys.exit(
            f"command failed ({done.returncode}): {' '.join(command)}\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
    return elapsed, cpu, done.stdout + done.stderr


def ensure_torchfix(venv: Path) -> Path:
    """TorchFix in its own virtualenv; refuse a venv into which torch was pulled."""
    exe = venv / "bin" / "torchfix"
    if not exe.exists():
        print(f"installing {TORCHFIX_PIN} into {venv} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", TORCHFIX_PIN],
            check=True,
        )
    probe = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import importlib.metadata as m, importlib.util as u;"
            "print(m.version('torchfix'), m.version('libcst'), u.find_spec('torch') is not None)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    version, libcst_version, has_torch = probe.stdout.split()
    if version != TORCHFIX_PIN.split("==")[1]:
        sys.exit(f"{venv} holds torchfix {version}, not {TORCHFIX_PIN}; delete it")
    if has_torch == "True":
        sys.exit(f"{venv} has torch installed; the benchmark venv must not pull torch")
    print(f"TorchFix {version} (libcst {libcst_version}) from {venv}")
    return exe


def count_lines(paths: Sequence[Path]) -> int:
    return sum(p.read_bytes().count(b"\n") for p in paths)


def prefilter_counts(paths: Sequence[Path]) -> int | None:
    try:
        from ddplint.source import might_be_distributed
    except ImportError:
        return None
    return sum(might_be_distributed(p.read_bytes()) for p in paths)


def subset(paths: Sequence[Path], count: int) -> list[Path]:
    """Every k-th file of the sorted list: the same mix of kinds as the whole tree."""
    if count <= 0 or count >= len(paths):
        return list(paths)
    step = len(paths) / count
    return [paths[int(i * step)] for i in range(count)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000, help="files to generate (2000)")
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--repeat", type=int, default=5, help="runs per tool (5)")
    parser.add_argument("--torchfix-repeat", type=int, default=1, help="TorchFix runs (1)")
    parser.add_argument(
        "--torchfix-files",
        type=int,
        default=0,
        help="time TorchFix on an evenly spread subset of N files (0: all files); "
        "its ratios are then per line, and labelled so",
    )
    parser.add_argument("--skip-torchfix", action="store_true")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="ddplint --jobs")
    parser.add_argument("--out", type=Path, help="where to generate (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the generated tree")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--bare-parse", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare_parse:
        bare_parse(args.bare_parse)
        return 0

    workdir = Path(tempfile.mkdtemp(prefix="ddplint-bench-"))
    root = (args.out or workdir / "repo").resolve()
    try:
        return _bench(args, root, workdir)
    finally:
        if args.keep:
            print(f"kept the generated tree in {root}")
        else:
            if args.out:
                shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class Job:
    """One tool to time: its command, what it covers, how many runs it gets."""

    measure: Measure
    command: list[str]
    runs: int
    ok: tuple[int, ...] = (0,)
    output: str = ""


def _bench(args: argparse.Namespace, root: Path, workdir: Path) -> int:
    start = time.perf_counter()
    paths = generate(root, args.files, args.seed)
    lines = count_lines(paths)
    candidates = prefilter_counts(paths)
    print(f"generated {len(paths)} files, {lines:,} lines in {root}", end="")
    print(f" ({time.perf_counter() - start:.1f}s)")
    if candidates is not None:
        print(
            f"ddplint prefilter: {candidates} files may hold DDP code and are parsed, "
            f"{len(paths) - candidates} are skipped unparsed"
        )
    listing = workdir / "files.txt"
    listing.write_text("\n".join(str(p) for p in paths) + "\n")
    here = [sys.executable, str(Path(__file__).resolve())]
    ddplint = [sys.executable, "-m", "ddplint", "check", "--exit-zero", "--quiet"]
    cpus = os.cpu_count() or 1
    everything = (len(paths), lines)

    jobs = [
        Job(
            Measure("bare libcst.parse_module (1 proc)", *everything),
            [*here, "--bare-parse", str(listing)],
            args.repeat,
        ),
        Job(
            Measure(f"ddplint --no-cache --jobs {args.jobs}", *everything),
            [*ddplint, "--no-cache", "--jobs", str(args.jobs), "."],
            args.repeat,
        ),
    ]
    if args.jobs != 1:
        jobs.append(
            Job(
                Measure("ddplint --no-cache --jobs 1", *everything),
                [*ddplint, "--no-cache", "--jobs", "1", "."],
                args.repeat,
            )
        )
    jobs.append(
        Job(
            Measure(f"ddplint warm cache --jobs {args.jobs}", *everything),
            [*ddplint, "--jobs", str(args.jobs), "."],
            args.repeat,
        )
    )
    torchfix: Measure | None = None
    if not args.skip_torchfix:
        exe = ensure_torchfix(TORCHFIX_VENV)
        chosen = subset(paths, args.torchfix_files)
        partial = len(chosen) < len(paths)
        sub_lines = count_lines(chosen) if partial else lines
        target = [str(p.relative_to(root)) for p in chosen] if partial else ["."]
        note = f"subset: {len(chosen)} files, {sub_lines:,} lines" if partial else ""
        if partial:
            sub_listing = workdir / "subset.txt"
            sub_listing.write_text("\n".join(str(p) for p in chosen) + "\n")
            jobs.append(
                Job(
                    Measure("bare parse, TorchFix's subset", len(chosen), sub_lines, note=note),
                    [*here, "--bare-parse", str(sub_listing)],
                    args.repeat,
                )
            )
        torchfix = Measure(f"TorchFix 0.7.0 (-j {cpus})", len(chosen), sub_lines, note=note)
        jobs.append(Job(torchfix, [str(exe), *target], args.torchfix_repeat, ok=(0, 1)))

    shutil.rmtree(root / ".ddplint_cache", ignore_errors=True)
    timed([*ddplint, "--jobs", str(args.jobs), "."], root)  # populate the cache once
    load = os.getloadavg()[0]
    print(f"\ntiming, round-robin, up to {args.repeat} runs each ({cpus} cores here):", flush=True)
    for rep in range(max(j.runs for j in jobs)):
        for job in jobs:
            if rep >= job.runs:
                continue
            elapsed, cpu, job.output = timed(job.command, root, job.ok)
            job.measure.seconds.append(elapsed)
            job.measure.cpu_seconds.append(cpu)
            print(
                f"  {job.measure.tool:<36} run {rep + 1}/{job.runs}: {elapsed:7.2f}s "
                f"(CPU {cpu:.2f}s)",
                flush=True,
            )
    loop = json.loads(jobs[0].output.strip().splitlines()[-1])
    if loop["failures"]:
        sys.exit(f"{loop['failures']} generated files do not parse")
    findings = len([line for line in jobs[1].output.splitlines() if line.strip()])
    if torchfix is not None:
        checked = [line for line in jobs[-1].output.splitlines() if "Finished checking" in line]
        if checked:
            print(f"  TorchFix: {checked[-1].strip()}")
    print(f"load average (1 min) before timing {load:.2f}, after {os.getloadavg()[0]:.2f}")
    bare = jobs[0].measure
    report([j.measure for j in jobs], bare, torchfix, *everything, findings, candidates, args)
    print(f"\ntotal benchmark time {time.perf_counter() - start:.0f}s")
    return 0


def report(
    results: list[Measure],
    bare: Measure,
    torchfix: Measure | None,
    files: int,
    lines: int,
    findings: int,
    candidates: int | None,
    args: argparse.Namespace,
) -> None:
    partial = torchfix is not None and torchfix.files < files
    header = (
        f"{'tool':<36} {'median s':>9} {'min-max s':>13} {'files/s':>9} {'lines/s':>10} "
        f"{'time/bare':>10} {'x TorchFix':>11} {'CPU s':>8} {'cpu/bare':>9}"
    )
    print(f"\n{files} files, {lines:,} lines; medians of {args.repeat} runs", end="")
    if torchfix is not None:
        print(f" ({len(torchfix.seconds)} for TorchFix)", end="")
    print("\n" + header + "\n" + "-" * len(header))
    rows = []
    for m in results:
        # Ratios are per line, so that figures measured on a subset compare with the rest.
        vs_bare = bare.lines_per_s / m.lines_per_s
        cpu_vs_bare = m.cpu_per_line / bare.cpu_per_line
        faster = m.lines_per_s / torchfix.lines_per_s if torchfix else None
        row = {
            "tool": m.tool,
            "files": m.files,
            "lines": m.lines,
            "median_s": round(m.median, 3),
            "runs_s": [round(s, 3) for s in m.seconds],
            "files_per_s": round(m.files / m.median, 1),
            "lines_per_s": round(m.lines_per_s),
            "time_vs_bare_parse": round(vs_bare, 3),
            "speedup_vs_torchfix": round(faster, 2) if faster else None,
            "cpu_runs_s": [round(s, 3) for s in m.cpu_seconds],
            "cpu_vs_bare_parse": round(cpu_vs_bare, 3),
            "note": m.note,
        }
        rows.append(row)
        spread = f"{min(m.seconds):.2f}-{max(m.seconds):.2f}"
        print(
            f"{m.tool:<36} {m.median:9.2f} {spread:>13} {row['files_per_s']:9.1f} "
            f"{row['lines_per_s']:10,} {vs_bare:10.2f} "
            f"{(f'{faster:.2f}' if faster else '-'):>11} "
            f"{statistics.median(m.cpu_seconds):8.2f} {cpu_vs_bare:9.2f}"
            + (f"  [{m.note}]" if m.note else "")
        )
    print(
        "\ntime/bare: median time per line over the bare single-process parse's "
        "(target <= 1.00).\nx TorchFix: how many times faster per line than TorchFix.\n"
        "CPU s: median CPU seconds (user + system, worker processes included); cpu/bare: the "
        "same per line over the bare parse's (the total work, which other processes on a "
        "shared machine do not inflate as they do the wall clock)."
    )
    if partial:
        assert torchfix is not None
        print(
            f"TorchFix was timed on {torchfix.files} of {files} files; its whole-tree time "
            f"is EXTRAPOLATED per line: about {lines / torchfix.lines_per_s:.0f}s."
        )
        same = [m for m in results if m is not torchfix and m.files == torchfix.files]
        if same:
            print(
                f"On those same files TorchFix took {torchfix.median / same[0].median:.1f}x "
                "the bare single-process parse."
            )
    print(f"ddplint reported {findings} findings", end="")
    if candidates is not None:
        print(f"; parsed {candidates} files, skipped {files - candidates} by its prefilter")
    else:
        print()
    if args.json:
        args.json.write_text(
            json.dumps(
                {"files": files, "lines": lines, "findings": findings, "rows": rows}, indent=2
            )
        )


if __name__ == "__main__":
    sys.exit(main())

"""Loading a checkpoint folder straight into the fp16-weight CPU plan, one tensor at a time (issue 25: memory).

Imported only by `cpu_runtime` when a model is loaded (it imports torch at the top).

Why: `from_pretrained` maps the safetensors files and hands out tensors that are views of the mapping.
Packing a linear frees the view, but the file stays mapped until loading ends, and every page it read stays
in the process's resident set. So the bf16 checkpoint (1.6 GB at 0.8B) and the packed fp16 copy grew side
by side: 4.39 GB peak at 0.8B against the goal of 3 GB (bench/results/cpu_policy.json).

Here nothing is mapped:
- the model is built from its config with its parameters on the meta device (no memory; buffers are real,
  because the rotary frequencies are computed when the model is made, not read from the file);
- each weight is read from the safetensors file with ordinary reads (the format is an 8-byte header length,
  a JSON header of names, dtypes, shapes and byte offsets, then the raw data) into a buffer of its own, set
  in place or packed, and the buffer is freed. The kernel's page cache keeps the file, but that is not the
  process's memory, and it is given back under pressure.

The result is the same model as `from_pretrained(dtype=bfloat16)` followed by `to_fp16_weights`, bit for bit
(tests/test_policy_cpu_runtime.py): floating tensors are read as bf16 as `from_pretrained` would cast them,
the tied output head is the embedding matrix, and the generation config is the folder's.

When the checkpoint's names do not match the model's (a layout transformers renames while loading),
`load_fp16w_streamed` returns None and says why; the caller loads through `from_pretrained` instead.
"""

from __future__ import annotations

import json
import logging
import struct
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from assistant_core.policy.cpu_bf16_modules import Bf16Embedding, widen_the_rest
from assistant_core.policy.cpu_fp16w_modules import (
    OWN,
    Fp16WeightLinear,
    fusion_groups,
    install_fused,
    output_head,
)

log = logging.getLogger(__name__)

DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32, "F64": torch.float64,
          "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
          "BOOL": torch.bool}
BLOCK = 32768  # rows of the output head packed at a time (BlockedFp16Head)
MAX_HEADER = 100 * 2**20  # a safetensors header is JSON of names and offsets; anything larger is not one


class CheckpointError(ValueError):
    """A safetensors file that cannot be read as one (truncated, a header that is not JSON, an unknown dtype)."""


class CheckpointReader:
    """The tensors of a folder's *.safetensors files, read one at a time with plain file reads (no mapping)."""

    def __init__(self, folder: str | Path):
        self.index: dict[str, tuple[Path, torch.dtype, tuple[int, ...], int, int]] = {}
        for path in sorted(Path(folder).glob("*.safetensors")):
            with path.open("rb") as f:
                raw = f.read(8)
                if len(raw) != 8:
                    raise CheckpointError(f"{path.name}: too short to be a safetensors file")
                (length,) = struct.unpack("<Q", raw)
                if length > MAX_HEADER:
                    raise CheckpointError(f"{path.name}: header of {length} bytes is not a safetensors header")
                try:
                    header = json.loads(f.read(length))
                except ValueError as error:
                    raise CheckpointError(f"{path.name}: header is not JSON ({error})") from error
            size = path.stat().st_size
            for name, info in header.items():
                if name == "__metadata__":
                    continue
                if info.get("dtype") not in DTYPES:
                    raise CheckpointError(f"{path.name}: {name} has dtype {info.get('dtype')!r}, not one this reader knows")
                begin, end = (8 + length + int(o) for o in info["data_offsets"])
                if end > size or begin > end:
                    raise CheckpointError(f"{path.name}: {name} lies outside the file (truncated download?)")
                self.index[name] = (path, DTYPES[info["dtype"]], tuple(int(d) for d in info["shape"]), begin, end)

    def __contains__(self, name: str) -> bool:
        return name in self.index

    def numel(self, name: str) -> int:
        return (self.index[name][4] - self.index[name][3]) // self.index[name][1].itemsize

    def read(self, name: str, scratch: torch.Tensor | None = None) -> torch.Tensor:
        """The tensor, in a buffer of its own, or in the front of `scratch` (uint8, reused: only for a tensor that
        is used up before the next read)."""
        path, dtype, shape, begin, end = self.index[name]
        buffer = torch.empty(end - begin, dtype=torch.uint8) if scratch is None else scratch[: end - begin]
        if end > begin:
            with path.open("rb") as f:
                f.seek(begin)
                if f.readinto(memoryview(buffer.numpy())) != end - begin:
                    raise CheckpointError(f"{path.name}: {name} was cut short while reading")
        return buffer.view(dtype).reshape(shape)


def _as_loaded(tensor: torch.Tensor) -> torch.Tensor:
    """What `from_pretrained(dtype=bfloat16)` makes of a stored tensor: floating point becomes bf16."""
    return tensor.to(torch.bfloat16) if tensor.is_floating_point() else tensor


def skeleton(folder: str | Path) -> nn.Module:
    """The folder's model, built from its config with parameters on the meta device and real buffers."""
    from accelerate import init_empty_weights
    from transformers import AutoConfig, AutoModelForImageTextToText, GenerationConfig

    config = AutoConfig.from_pretrained(str(folder))
    with init_empty_weights(include_buffers=False):
        model = AutoModelForImageTextToText.from_config(config, dtype=torch.bfloat16)
    model.tie_weights()  # from_config leaves a tied head untied; from_pretrained ties it (config.tie_word_embeddings)
    if (Path(folder) / "generation_config.json").exists():
        model.generation_config = GenerationConfig.from_pretrained(str(folder))
    return model


def load_fp16w_streamed(folder: str | Path, progress: Callable[[float], None] | None = None, *,
                        fuse: bool = True, candidates: bool = True) -> nn.Module | None:
    """The folder's model in the fp16-weight plan, read one tensor at a time; None (with the reason logged) when
    the checkpoint's names are not the model's. Raises CheckpointError for a damaged file. `fuse`: linears
    that read one input packed as one matrix (cpu_fp16w_modules.fusion_groups); `candidates`: a tied head
    scores in int8 with exact candidates (cpu_fp16w_modules.output_head)."""
    reader = CheckpointReader(folder)
    model = skeleton(folder)
    names = {name for name, _ in model.named_parameters(remove_duplicate=False)}
    language = model.model.language_model
    embed = language.get_input_embeddings()
    embed_name = next(n for n, m in model.named_modules() if m is embed) + ".weight"
    lm_head = getattr(model, "lm_head", None)
    tied = lm_head is not None and lm_head.weight is embed.weight
    needed = names - ({"lm_head.weight"} if tied else set())
    missing = sorted(n for n in needed if n not in reader)
    if missing:
        log.info("checkpoint names differ from the model's (%d missing, e.g. %s); loading through transformers",
                 len(missing), missing[:3])
        return None
    # Linears that read one input are packed as one matrix (cpu_fp16w_modules.fusion_groups): read here
    # member after member into one buffer, before the other linears.
    groups = [(name, module, parts, [f"{name}.{p}.weight" for p in parts])
              for name, module, parts in (fusion_groups(model) if fuse else [])]

    def meta_linears(head: nn.Module | None = lm_head) -> list[tuple[str, nn.Module, str, nn.Linear]]:
        return [(parent_name, parent, name, child) for parent_name, parent in list(model.named_modules())
                for name, child in list(parent.named_children())
                if isinstance(child, nn.Linear) and child is not head]

    linears = meta_linears()
    total = sum(c.in_features * c.out_features for *_, c in linears) + (embed.weight.numel() if lm_head is not None else 0)
    # Two buffers reused for every linear (its stored bytes, and the fp32 matrix the packing reads), so that
    # the heap holds only what is kept: a fresh buffer per weight left freed holes between the packed
    # matrices (about 0.5 GB of the resident set at 0.8B, measured).
    largest = max([reader.numel(f"{p}.{n}.weight" if p else f"{n}.weight") for p, _, n, _ in linears]
                  + [sum(reader.numel(n) for n in members) for *_, members in groups] + [BLOCK * embed.weight.shape[1]])
    raw = torch.empty(largest * 4, dtype=torch.uint8)
    wide = torch.empty(largest, dtype=torch.float32)

    def widened(tensor: torch.Tensor, at: int = 0) -> torch.Tensor:
        """`tensor` as fp32 in `wide`, from element `at` on."""
        out = wide[at:at + tensor.numel()].view(tensor.shape)
        out.copy_(_as_loaded(tensor))  # through bf16, as from_pretrained(dtype=bfloat16) would hold it
        return out

    done = 0
    for name, module, parts, members in groups:
        at = 0
        for member in members:
            at += widened(reader.read(member, raw), at).numel()
        install_fused(model, name, module, parts, wide[:at].view(-1, getattr(module, parts[0]).in_features))
        done += at
        if progress is not None:
            progress(done / total)
    linears = meta_linears()  # the rest (a fused MLP keeps its down_proj, under the same name)
    for parent_name, parent, name, child in linears:
        prefix = f"{parent_name}.{name}" if parent_name else name
        weight = widened(reader.read(prefix + ".weight", raw))
        bias = _as_loaded(reader.read(prefix + ".bias")) if child.bias is not None else None
        setattr(parent, name, Fp16WeightLinear(weight, bias))
        del weight, bias
        done += child.in_features * child.out_features
        if progress is not None:
            progress(done / total)
    rows = _as_loaded(reader.read(embed_name))
    language.embed_tokens = Bf16Embedding(rows, getattr(embed, "padding_idx", None))
    if lm_head is not None:
        head = rows if tied else _as_loaded(reader.read("lm_head.weight"))
        bias = _as_loaded(reader.read("lm_head.bias")) if lm_head.bias is not None else None
        model.lm_head = output_head(head, bias, language.embed_tokens, tied=tied, candidates=candidates,
                                    block=BLOCK, widen=widened)
        del head, bias
    del rows, embed, lm_head
    raw = wide = None  # the two buffers go before the rest is widened
    for module_name, module in model.named_modules():  # norms, gates, conv, patch and position embeddings
        if isinstance(module, OWN):  # packed or set above (the embedding's matrix is a buffer: not read again)
            continue
        prefix = f"{module_name}." if module_name else ""
        for key, param in list(module._parameters.items()):
            if param is not None and param.is_meta:
                module._parameters[key] = nn.Parameter(_as_loaded(reader.read(prefix + key)), requires_grad=False)
        for key in list(module._buffers):
            if key not in module._non_persistent_buffers_set and prefix + key in reader:
                module._buffers[key] = _as_loaded(reader.read(prefix + key))
    left = [n for n, t in list(model.named_parameters()) + list(model.named_buffers()) if t.is_meta]
    if left:
        raise CheckpointError(f"not in the checkpoint: {', '.join(left[:5])}")
    if progress is not None:
        progress(1.0)
    widen_the_rest(model, OWN)
    return model


__all__ = ["CheckpointError", "CheckpointReader", "load_fp16w_streamed", "skeleton"]

"""torch modules of the CPU runtime's mixed-precision plan: bf16 weights and matmuls, fp32 everywhere else.

Imported only by `cpu_runtime` when a model is loaded (it imports torch at the top).

The plan (issue 25, item 3; measured in bench/results/cpu_policy.json and tests/test_policy_cpu_runtime.py):
every `nn.Linear` of the text decoder and the vision tower keeps its weight in bf16 (the published
checkpoints' own dtype, so nothing is rounded) and multiplies in bf16 on the CPU's bf16 units (AMX /
AVX512-BF16; oneDNN accumulates in fp32), but its input arrives and its output leaves in fp32. The
residual stream, the RMS norms, attention softmax, the rotary embedding, the Gated DeltaNet gates, causal
conv and recurrent state, and the KV cache all stay fp32, as in transformers' fp32 forward. Only two
roundings remain per matmul (its input to bf16, its output from the fp32 accumulator to bf16), where an
all-bf16 model also rounds every residual addition and norm output and stores its states in bf16: those
accumulate over 24 layers and flipped the greedy choice on 10-15 % of the tiny set.

The output head can be kept in fp32 (`head="fp32"`): it is one extra copy of the embedding matrix in
fp32 (1 GB at 0.8B), read once per token, so it costs decode time; the default shares the embedding's
bf16 matrix and returns fp32 logits.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

BF16 = torch.bfloat16


class Bf16Linear(nn.Module):
    """`nn.Linear` with its weight in bf16 and a bf16 matmul; fp32 (the caller's dtype) in and out."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None):
        super().__init__()
        self.register_buffer("weight", weight.detach().to(BF16))
        self.register_buffer("bias", None if bias is None else bias.detach().float())
        self.out_features, self.in_features = weight.shape

    @classmethod
    def from_linear(cls, linear: nn.Linear) -> Bf16Linear:
        return cls(linear.weight, linear.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.linear(x.to(BF16), self.weight).to(x.dtype)
        if self.bias is not None:
            out = out + self.bias
        return out

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bf16Embedding(nn.Module):
    """A token embedding stored in bf16 that returns fp32 rows (a lookup: nothing is rounded twice)."""

    def __init__(self, weight: torch.Tensor, padding_idx: int | None = None):
        super().__init__()
        self.register_buffer("weight", weight.detach().to(BF16))
        self.padding_idx = padding_idx
        self.num_embeddings, self.embedding_dim = weight.shape

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, self.weight).float()


OWN = (Bf16Linear, Bf16Embedding)


def to_mixed_precision(model: nn.Module, head: str = "bf16") -> dict[str, int]:
    """Turn a loaded Qwen3.5 / Qwen3-VL model (bf16 or fp32) into the mixed plan, in place.

    Each linear is swapped as it is met, so the model never exists twice in memory; then what is left
    (norms, gates, conv, patch embedding, position embedding, rotary buffers) is widened to fp32."""
    if head not in ("bf16", "fp32"):
        raise ValueError(f"head must be bf16 or fp32, not {head!r}")
    lm_head = getattr(model, "lm_head", None)
    stats = {"bf16_linears": 0}
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear) and child is not lm_head:
                setattr(parent, name, Bf16Linear.from_linear(child))
                stats["bf16_linears"] += 1
    language = model.model.language_model
    embed = language.get_input_embeddings() if hasattr(language, "get_input_embeddings") else language.embed_tokens
    tied = lm_head is not None and lm_head.weight is embed.weight
    new_embed = Bf16Embedding(embed.weight, getattr(embed, "padding_idx", None))
    language.embed_tokens = new_embed
    if lm_head is not None:
        if head == "fp32":
            out = nn.Linear(lm_head.in_features, lm_head.out_features, bias=lm_head.bias is not None)
            out.weight = nn.Parameter(lm_head.weight.detach().float(), requires_grad=False)
            if lm_head.bias is not None:
                out.bias = nn.Parameter(lm_head.bias.detach().float(), requires_grad=False)
            model.lm_head = out
        elif tied:  # share the embedding's bf16 matrix: one copy in memory
            model.lm_head = Bf16Linear(new_embed.weight, lm_head.bias)
            model.lm_head.weight = new_embed.weight
        else:
            model.lm_head = Bf16Linear.from_linear(lm_head)
    del embed, lm_head
    widen_the_rest(model, OWN)
    stats["tied_head"] = int(tied and head == "bf16")
    return stats


def widen_the_rest(model: nn.Module, own: tuple[type, ...]) -> None:
    """Everything a plan did not swap (norms, gates, conv, patch and position embeddings, rotary buffers)
    to fp32; the plan's own modules (`own`) keep their storage."""
    mine = {id(t) for m in model.modules() if isinstance(m, own) for t in m.buffers(recurse=False)}
    for param in model.parameters():
        if param.is_floating_point() and param.dtype != torch.float32 and id(param) not in mine:
            param.data = param.data.float()
    for module in model.modules():
        if isinstance(module, own):
            continue
        for key, buf in list(module._buffers.items()):
            if buf is not None and buf.is_floating_point() and buf.dtype != torch.float32:
                module._buffers[key] = buf.float()
    model.config.dtype = torch.float32
    for sub in ("text_config", "vision_config"):
        if hasattr(model.config, sub):
            getattr(model.config, sub).dtype = torch.float32


__all__ = ["Bf16Embedding", "Bf16Linear", "to_mixed_precision", "widen_the_rest"]

"""torch modules of the CPU runtime's plan for x86 CPUs without bf16 units: fp16 weights, fp32 arithmetic.

Imported only by `cpu_runtime` when a model is loaded (it imports torch at the top).

Most laptops have AVX2 but no bf16 matrix units (no AMX, no AVX512-BF16: AMD before Zen 4, Intel's
consumer chips since Alder Lake). There a bf16 matmul is emulated and runs several times slower than
fp32 (shared/notes/ml-stack-facts.md; 10x at a 1,831-token prefill on this AVX2 machine), so the bf16
plans do not help, and fp32 reads 4 bytes a weight for every generated token, which is what a decode step
waits for. This plan (issue 25):

- every `nn.Linear` of the text decoder and the vision tower, and the output head, keep their weights in
  fp16 inside fbgemm's packed fp16 GEMM (`quantized::linear_dynamic_fp16`, in the x86 torch wheel on
  Linux, Windows and macOS). The kernel widens the weights to fp32 in registers and multiplies and
  accumulates in fp32, so activations are never rounded; only the weights are stored in 2 bytes;
- a bf16 checkpoint's weights are exactly representable in fp16 (bf16 has 8 significant bits, fp16 11)
  for every magnitude from 6.1e-5 to 65504, which covers trained and random-init weights alike (values
  below lose some low bits as fp16 subnormals). So this plan computes with the checkpoint's own weights in
  fp32 arithmetic: the agreement with transformers' fp32 forward is that of fp32, up to summation order;
- the token embedding stays the checkpoint's bf16 matrix (a lookup returns fp32 rows, nothing rounded);
- norms, attention, the Gated DeltaNet gates, conv and recurrent states, the KV cache and logits: fp32.

The cost is packing at load (fbgemm lays the fp16 weights out in its blocked format: tens of seconds for
0.8B on two cores, measured in bench/bench_cpu_policy.py as the load time), with progress per layer. The
runtime reads the checkpoint for this plan one tensor at a time (`cpu_stream.py`), so the bf16 file and the
packed copy are never both in memory.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from assistant_core.policy.cpu_bf16_modules import Bf16Embedding, widen_the_rest


def fp16_gemm_available() -> bool:
    """fbgemm's packed fp16 GEMM is in this torch build (the x86 wheels; not ARM)."""
    return "fbgemm" in torch.backends.quantized.supported_engines and hasattr(torch.ops.quantized,
                                                                               "linear_dynamic_fp16")


class Fp16WeightLinear(nn.Module):
    """`nn.Linear` with fp16 weights packed for fbgemm; fp32 in, fp32 arithmetic, fp32 out."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None):
        super().__init__()
        self.out_features, self.in_features = weight.shape
        b = None if bias is None else bias.detach().float().contiguous()
        self.has_bias = b is not None
        # the prepack widens to fp32 first (its input); one layer at a time, so never the whole model
        self._packed = torch.ops.quantized.linear_prepack_fp16(weight.detach().float().contiguous(), b)

    @classmethod
    def from_linear(cls, linear: nn.Linear) -> Fp16WeightLinear:
        return cls(linear.weight, linear.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == torch.float32:  # the kernel takes any leading dimensions and strides (one call a token)
            return torch.ops.quantized.linear_dynamic_fp16(x, self._packed)
        return torch.ops.quantized.linear_dynamic_fp16(x.float(), self._packed).to(x.dtype)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.has_bias}"


class BlockedFp16Head(nn.Module):
    """The output head as fp16-weight linears over row blocks (a 248k-row vocabulary packs in parts)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None = None, block: int = 32768,
                 widen: Callable[[torch.Tensor], torch.Tensor] | None = None):
        """`widen`: how a block of rows becomes the fp32 matrix the packing reads (default: a fresh copy; the
        streamed load passes one that reuses a buffer)."""
        super().__init__()
        rows = weight.shape[0]
        widen = widen or (lambda part: part.float())
        self.blocks = nn.ModuleList(
            Fp16WeightLinear(widen(weight[start:start + block]), None if bias is None else bias[start:start + block])
            for start in range(0, rows, block))
        self.out_features, self.in_features = weight.shape

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([b(x) for b in self.blocks], dim=-1)


OWN = (Fp16WeightLinear, Bf16Embedding, BlockedFp16Head)


def to_fp16_weights(model: nn.Module, progress: Callable[[float], None] | None = None) -> dict[str, int]:
    """Turn a loaded Qwen3.5 / Qwen3-VL model (bf16 or fp32) into the fp16-weight plan, in place.

    Each linear is swapped as it is met (the model never exists twice); `progress` gets the fraction of
    linears packed so far. Then what is left (norms, gates, conv, patch and position embeddings, rotary
    buffers) is widened to fp32."""
    lm_head = getattr(model, "lm_head", None)
    # (parent, name, size) only: holding the children themselves would keep every bf16 weight alive until
    # the end. (After from_pretrained the peak is still about both copies, 4.4 GB at 0.8B: the checkpoint's
    # bf16 pages stay mapped while the packed fp16 copy grows; the runtime therefore loads this plan with
    # cpu_stream.load_fp16w_streamed, which reads one tensor at a time and gives the same model.)
    linears = [(parent, name, child.in_features * child.out_features) for parent in list(model.modules())
               for name, child in list(parent.named_children())
               if isinstance(child, nn.Linear) and child is not lm_head]
    total = sum(size for _, _, size in linears) + (lm_head.weight.numel() if lm_head is not None else 0)
    done = 0
    stats = {"fp16_linears": 0}
    for parent, name, size in linears:
        setattr(parent, name, Fp16WeightLinear.from_linear(getattr(parent, name)))  # the bf16 one is freed
        stats["fp16_linears"] += 1
        done += size
        if progress is not None:
            progress(done / total)
    language = model.model.language_model
    embed = language.get_input_embeddings() if hasattr(language, "get_input_embeddings") else language.embed_tokens
    if lm_head is not None:
        model.lm_head = BlockedFp16Head(lm_head.weight, lm_head.bias)
        stats["tied_head"] = int(lm_head.weight is embed.weight)
    language.embed_tokens = Bf16Embedding(embed.weight, getattr(embed, "padding_idx", None))
    del embed, lm_head
    if progress is not None:
        progress(1.0)
    widen_the_rest(model, OWN)
    return stats


__all__ = ["BlockedFp16Head", "Fp16WeightLinear", "fp16_gemm_available", "to_fp16_weights"]

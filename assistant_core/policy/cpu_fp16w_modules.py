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

import logging
from collections.abc import Callable, Sequence

import torch
from torch import nn

from assistant_core.policy.cpu_bf16_modules import Bf16Embedding, widen_the_rest
from assistant_core.policy.cpu_head import Int8CandidateHead, int8_gemm_available

log = logging.getLogger(__name__)


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


class Fp16GateUpMlp(nn.Module):
    """Qwen3.5's gated MLP, down(act(gate(x)) * up(x)), with gate and up packed as one matrix (their rows
    stacked): one pass over both weights for a generated token instead of two. Each output element is the
    same dot product the separate linears compute, up to fp32 rounding (the kernel blocks a wider matrix
    differently: the taught tiny model's logits moved by 1.3e-7 of the largest, the same replies;
    tests/test_policy_cpu_runtime.py)."""

    def __init__(self, gate_up: Fp16WeightLinear, down_proj: nn.Module, act_fn: Callable, intermediate: int):
        super().__init__()
        self.gate_up = gate_up
        self.down_proj = down_proj
        self.act_fn = act_fn
        self.intermediate = intermediate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        both = self.gate_up(x)
        return self.down_proj(self.act_fn(both[..., :self.intermediate]) * both[..., self.intermediate:])


class Fp16FusedProjections(nn.Module):
    """Linears that read the same input (a Gated DeltaNet layer's in_proj_qkv, _z, _b and _a; an attention
    layer's q_proj, k_proj and v_proj) packed as one matrix. The layer keeps their names as
    `Fp16ProjectionPart`s: the first asked for an input computes all rows, the others take their columns of
    that result, which is held until each part has had its share
    (so a prompt chunk's result is not kept afterwards). A part asking again for the input it was already
    given, or for another input, gets a fresh computation: the layer's forward asks each part once for the
    same tensor (inference tensors carry no version counter, so a tensor changed in place between two parts'
    calls would not be noticed; neither transformers' forward nor cpu_gdn_step does that)."""

    def __init__(self, weight: torch.Tensor, sizes: Sequence[int]):
        super().__init__()
        self.linear = Fp16WeightLinear(weight)
        self.sizes = tuple(int(n) for n in sizes)
        self._held: tuple[torch.Tensor, torch.Tensor, set[int]] | None = None  # input, output, parts served

    def columns(self, x: torch.Tensor, start: int, stop: int) -> torch.Tensor:
        held = self._held
        if held is None or held[0] is not x or start in held[2]:
            held = (x, self.linear(x), set())
        held[2].add(start)
        self._held = held if len(held[2]) < len(self.sizes) else None
        return held[1][..., start:stop]


class Fp16ProjectionPart(nn.Module):
    """One linear's columns of an `Fp16FusedProjections` (the layer owns the shared module once)."""

    def __init__(self, shared: Fp16FusedProjections, start: int, stop: int):
        super().__init__()
        object.__setattr__(self, "_shared", shared)  # not a submodule: registered once, on the layer
        self.start, self.stop = start, stop
        self.out_features = stop - start

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self._shared.columns(x, self.start, self.stop)

    def extra_repr(self) -> str:
        return f"columns {self.start}:{self.stop} of the layer's in_proj_fused"


MLP_PARTS = ("gate_proj", "up_proj")
GDN_PARTS = ("in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a")
ATTENTION_PARTS = ("q_proj", "k_proj", "v_proj")


def fusion_groups(model: nn.Module) -> list[tuple[str, nn.Module, tuple[str, ...]]]:
    """The text decoder's linears that read one input, as (module name, module, member names): each gated
    MLP's gate and up, each Gated DeltaNet layer's four input projections, each attention layer's q, k and v
    (bias-free, as in Qwen3.5)."""
    language = model.model.language_model
    base = next(name for name, module in model.named_modules() if module is language)
    groups = []
    for name, module in language.named_modules():
        for parts in (MLP_PARTS, GDN_PARTS, ATTENTION_PARTS):
            members = [getattr(module, p, None) for p in parts]
            if not all(isinstance(m, nn.Linear) and m.bias is None for m in members):
                continue
            if len({m.in_features for m in members}) != 1:
                continue
            if parts is MLP_PARTS and not (isinstance(getattr(module, "down_proj", None), nn.Linear)
                                           and hasattr(module, "act_fn")):
                continue
            groups.append((f"{base}.{name}" if name else base, module, parts))
    return groups


def install_fused(model: nn.Module, name: str, module: nn.Module, parts: tuple[str, ...],
                  weight: torch.Tensor) -> None:
    """Pack `weight` (the members' fp32 rows stacked in `parts` order) and put it in place of the members."""
    sizes = [getattr(module, p).out_features for p in parts]
    if parts == MLP_PARTS:
        parent_name, _, attr = name.rpartition(".")
        setattr(model.get_submodule(parent_name), attr,
                Fp16GateUpMlp(Fp16WeightLinear(weight), module.down_proj, module.act_fn, sizes[0]))
        return
    shared = Fp16FusedProjections(weight, sizes)
    module.in_proj_fused = shared  # registered once, on the layer; the parts only point to it
    start = 0
    for part, size in zip(parts, sizes, strict=True):
        setattr(module, part, Fp16ProjectionPart(shared, start, start + size))
        start += size


OWN = (Fp16WeightLinear, Bf16Embedding, BlockedFp16Head, Fp16GateUpMlp, Fp16FusedProjections, Fp16ProjectionPart,
       Int8CandidateHead)


def output_head(weight: torch.Tensor, bias: torch.Tensor | None, embedding: Bf16Embedding, *, tied: bool,
                candidates: bool = True, block: int = 32768,
                widen: Callable[[torch.Tensor], torch.Tensor] | None = None) -> nn.Module:
    """The plan's output head: for a head tied to the embedding (the Qwen3.5 checkpoints), with `candidates`,
    int8 scores with the candidate rows exact from the embedding's own matrix (cpu_head.py: the same argmax,
    a quarter of the bytes fp16 reads less); otherwise fp16 weights in row blocks."""
    if candidates and tied and bias is None and int8_gemm_available():
        try:
            return Int8CandidateHead(embedding.weight, block=block)
        except (RuntimeError, AttributeError, NotImplementedError) as error:  # torch deprecates quantized tensors
            log.warning("int8 output head unavailable (%s); packing the fp16 head", error)
    return BlockedFp16Head(weight, bias, block=block, widen=widen)


def to_fp16_weights(model: nn.Module, progress: Callable[[float], None] | None = None, *,
                    fuse: bool = True, candidates: bool = True) -> dict[str, int]:
    """Turn a loaded Qwen3.5 / Qwen3-VL model (bf16 or fp32) into the fp16-weight plan, in place.

    With `fuse`, the linears that read one input (`fusion_groups`) are first packed as one matrix each;
    `candidates`: a tied head scores in int8 with exact candidates (`output_head`).
    Each linear is swapped as it is met (the model never exists twice); `progress` gets the fraction of
    linears packed so far. Then what is left (norms, gates, conv, patch and position embeddings, rotary
    buffers) is widened to fp32."""
    for name, module, parts in fusion_groups(model) if fuse else []:  # one matrix each (fewer passes a token)
        weight = torch.cat([getattr(module, p).weight.detach().float() for p in parts])
        install_fused(model, name, module, parts, weight)
        del weight
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
    language.embed_tokens = Bf16Embedding(embed.weight, getattr(embed, "padding_idx", None))
    if lm_head is not None:
        tied = lm_head.weight is embed.weight
        model.lm_head = output_head(lm_head.weight, lm_head.bias, language.embed_tokens, tied=tied,
                                    candidates=candidates)
        stats["tied_head"] = int(tied)
    del embed, lm_head
    if progress is not None:
        progress(1.0)
    widen_the_rest(model, OWN)
    return stats


__all__ = ["BlockedFp16Head", "Fp16FusedProjections", "Fp16GateUpMlp", "Fp16ProjectionPart", "Fp16WeightLinear",
           "fp16_gemm_available", "fusion_groups", "install_fused", "output_head", "to_fp16_weights"]

"""torch modules of the int8 CPU runtime (module-level so a converted model pickles into the cache).

Imported only by `cpu_runtime` when a model is converted or loaded: it imports torch at the top.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic


def quantize_linears(module: nn.Module) -> int:
    """Swap every nn.Linear under `module` (fp32 by now) for a per-channel dynamic int8 linear, in place."""
    count = sum(1 for m in module.modules() if isinstance(m, nn.Linear))
    quantize_dynamic(module, {nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8, inplace=True)
    return count


class Int8RowEmbedding(nn.Module):
    """A token embedding stored as int8 rows with one fp32 scale per row (symmetric)."""

    def __init__(self, weight: torch.Tensor, padding_idx: int | None = None, block: int = 16384):
        super().__init__()
        rows = weight.shape[0]
        q = torch.empty(weight.shape, dtype=torch.int8)
        scale = torch.empty(rows, dtype=torch.float32)
        for start in range(0, rows, block):  # chunked: never a full fp32 copy of the matrix
            part = weight[start:start + block].float()
            s = part.abs().amax(dim=1).clamp_min(1e-12) / 127.0
            q[start:start + block] = torch.round(part / s[:, None]).clamp_(-127, 127).to(torch.int8)
            scale[start:start + block] = s
        self.register_buffer("qweight", q)
        self.register_buffer("scale", scale)
        self.padding_idx = padding_idx
        self.num_embeddings, self.embedding_dim = weight.shape

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.qweight[ids].to(torch.float32) * self.scale[ids].unsqueeze(-1)


class BlockedInt8Head(nn.Module):
    """The output head as dynamic int8 linears over row blocks of the (tied) embedding matrix."""

    def __init__(self, weight: torch.Tensor, block: int = 32768):
        super().__init__()
        parts = []
        rows, cols = weight.shape
        for start in range(0, rows, block):
            linear = nn.Linear(cols, min(block, rows - start), bias=False)
            with torch.no_grad():
                linear.weight.copy_(weight[start:start + block].float())
            holder = nn.Sequential(linear)
            quantize_linears(holder)
            parts.append(holder[0])
        self.blocks = nn.ModuleList(parts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([b(x) for b in self.blocks], dim=-1)

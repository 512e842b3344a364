"""The output head of the fp16-weight CPU plan for greedy decoding: int8 scores, the top rows exact.

Imported only by the CPU runtime's loaders (it imports torch at the top).

Why: a Qwen3.5 model ties its output head to the token embedding, and at 0.8B that matrix (248,320 x
1,024) is a third of the weights a generated token reads: 0.5 GB in fp16, about 27-32 ms of a 140 ms token
on two cores (fbgemm's fp16 GEMM). Greedy decoding needs only the row with the largest score, so:

1. every row is also held as int8 with one scale per row (symmetric, `s_r = max|w_r| / 127`), and a token's
   scores are computed from those (fbgemm's int8 GEMM: half the bytes, about 13 ms);
2. each approximate score comes with a bound on its error that holds for every input, not a typical one:
   |h.w - h^.w^| <= |h|.|w - w^| + |h - h^|.|w^| (Cauchy-Schwarz on each term), with |w - w^| and |w^|
   measured per row at load and |h - h^| measured per call, plus a margin for fp32 rounding;
3. the rows whose upper bound reaches the largest lower bound are the only ones that can hold the argmax;
   their scores are computed again exactly (fp32 arithmetic on the checkpoint's bf16 rows, the matrix the
   embedding already holds) and written over the approximations.

So the argmax of what this head returns is the argmax of the exact scores (up to fp32 rounding, as for
any fp32 computation), every other entry is within its bound (about 1 % of |h||w|), and greedy replies are
the ones the fp16 head gives. Rows in `protect()` (the end-of-text ids, which the runtime may mask while a
minimum length is not reached) are always exact and do not raise the floor, so the argmax stays exact with
them masked too. The int8 copy replaces the fp16 one (0.25 GB instead of 0.5 at 0.8B); the exact rows are
the embedding's own, not a copy.

How the input is made exact for the int8 kernel: fbgemm's dynamic int8 linear quantizes its input per call
(one scale for the tensor, 7 bits with `reduce_range`), which would put an unknown error into the scores.
Instead the input is put on a grid the kernel reproduces exactly: with `s` a power of two and
|h| <= 63 s, row one is round(h / s) and row two round(64 (h - s * row one) / s) (the remainder, 64 times
larger), integers; two extra columns, -63 and 64, against zero weights, make the kernel choose scale 1
and zero point 63 for both rows, so it quantizes them without error (scale 1 whatever the size of h: the
kernel raises a scale below 6.1e-5 to that, which put small inputs off the grid in a first version). The
score is s times row one's plus row two's / 64: the input to within s / 128, one pass over the int8 matrix
(a 2-row GEMM costs what a 1-row one does). Checked in tests/test_policy_cpu_head.py against float64, and the runtime checks each candidate's
exact score against its bound on every call; a miss (a torch whose kernel quantizes differently) is logged
and the head computes every score exactly from then on.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable, Iterable
from contextlib import contextmanager

import torch
from torch import nn

log = logging.getLogger(__name__)

GRID = 63  # |h| <= 63 s: row one's levels, with the zero point at 63 in the kernel's 0..127
REMAINDER = 64  # row two carries the remainder times this (a power of two: the division is exact)
ROUNDING = 1e-5  # fp32 rounding of the kernel's output and of the norms, relative to |h||w^| (generous)


def int8_gemm_available() -> bool:
    """fbgemm's int8 GEMM (dynamic linear) is in this torch build (the x86 wheels)."""
    return "fbgemm" in torch.backends.quantized.supported_engines and hasattr(torch.ops.quantized, "linear_dynamic")


def prepack_rows(q: torch.Tensor, scale: torch.Tensor) -> object:
    """fbgemm's packed form of int8 rows `q` (the last two columns zero: the grid's anchors) with one scale a
    row (float64), for `torch.ops.quantized.linear_dynamic`."""
    with warnings.catch_warnings():  # torch marks its quantized tensor type deprecated; its packing is used
        warnings.simplefilter("ignore", UserWarning)
        weight = torch._make_per_channel_quantized_tensor(q, scale, torch.zeros(q.shape[0], dtype=torch.long), 0)
        return torch.ops.quantized.linear_prepack(weight, None)


def grid_input(h: torch.Tensor, rows: int = 2) -> tuple[torch.Tensor, torch.Tensor, float] | None:
    """The kernel's input for the vector `h` / s as `rows` rows of integers on the grid (each the remainder
    of the ones before, REMAINDER times larger), h^ (what they represent) and s, a power of two; None where no
    grid fits. The two anchor columns make the kernel see scale 1 and zero point GRID whatever the size of
    `h` (it raises a scale below 6.1e-5 to that, which would put its input off the grid)."""
    m = float(h.abs().max())
    if not math.isfinite(m) or m < 1e-30 or m > 1e30:
        return None
    s = 2.0 ** math.ceil(math.log2(m / GRID))
    if m > GRID * s:  # log2 rounded down at an exact power of two
        s *= 2
    x = torch.empty(rows, h.shape[-1] + 2)
    rest, hat, unit = h / s, torch.zeros_like(h), 1.0
    for r in range(rows):
        level = torch.round(rest)
        x[r, :-2] = level
        hat += level * unit
        rest = (rest - level) * REMAINDER
        unit /= REMAINDER
    x[:, -2] = -GRID
    x[:, -1] = GRID + 1
    return x, hat * s, s


def grid_output(y: torch.Tensor, s: float) -> torch.Tensor:
    """The product for h from the kernel's rows for `grid_input(h)` (powers of two: exact scalings)."""
    out = y[-1]
    for r in range(y.shape[0] - 2, -1, -1):
        out = y[r] + out / REMAINDER
    return out * s


class Int8CandidateHead(nn.Module):
    """A tied output head: int8 scores with per-row error bounds, the candidate rows computed exactly."""

    def __init__(self, rows: torch.Tensor, *, block: int = 32768, limit: int = 16384,
                 progress: Callable[[float], None] | None = None):
        """`rows`: the embedding's (bf16) matrix, kept by reference; `limit`: more candidates than this and the
        call computes every score exactly instead (never seen on the measured models: see the bench)."""
        super().__init__()
        self.rows = rows.detach()
        self.out_features, self.in_features = vocab, dim = rows.shape
        self.limit = limit
        err = torch.empty(vocab)
        norm = torch.empty(vocab)
        # packed in row blocks (one GEMM call each, about 0.8 ms a token more than one matrix at 0.8B) so that
        # loading holds one block's int8 copy beside the packed ones, not the whole matrix twice; the fp32
        # temporaries are for `part` rows at a time
        self._blocks: list[tuple[int, int, object]] = []
        part = 4096
        for start in range(0, vocab, block):
            stop = min(vocab, start + block)
            q = torch.zeros(stop - start, dim + 2, dtype=torch.int8)  # two zero columns for the grid's anchors
            scale = torch.empty(stop - start, dtype=torch.float64)
            for a in range(start, stop, part):
                b = min(stop, a + part)
                w = self.rows[a:b].float()
                s = (w.abs().amax(1) / 127).clamp_min(torch.finfo(torch.float32).tiny)
                levels = torch.round(w / s[:, None]).clamp_(-127, 127)
                approx = levels * s[:, None]
                norm[a:b] = approx.norm(dim=1)
                err[a:b] = approx.sub_(w).norm(dim=1)
                q[a - start:b - start, :dim] = levels.to(torch.int8)
                scale[a - start:b - start] = s.double()
                del w, s, levels, approx
            self._blocks.append((start, stop, prepack_rows(q, scale)))
            del q, scale
            if progress is not None:
                progress(stop / vocab)
        self.register_buffer("err", err * (1 + ROUNDING), persistent=False)
        self.register_buffer("norm", norm, persistent=False)
        self.protected = torch.empty(0, dtype=torch.long)
        self.exact_all = False  # every score exact (first-token logits for agreement checks)
        self.broken = False  # a candidate missed its bound once: exact from then on
        self.calls = self.candidates = self.largest = self.full = 0

    def protect(self, ids: Iterable[int]) -> None:
        """Rows always computed exactly and left out of the floor (ids the caller may mask, e.g. end of text)."""
        self.protected = torch.tensor(sorted({int(i) for i in ids if 0 <= int(i) < self.out_features}),
                                      dtype=torch.long)

    @contextmanager
    def exact_scores(self):
        """Within this block every score is computed exactly (the full fp32 product)."""
        before, self.exact_all = self.exact_all, True
        try:
            yield self
        finally:
            self.exact_all = before

    def stats(self) -> dict[str, float]:
        return {"calls": self.calls, "mean_candidates": round(self.candidates / max(1, self.calls), 1),
                "max_candidates": self.largest, "exact_calls": self.full, "broken": int(self.broken)}

    def _exact(self, h: torch.Tensor, block: int = 32768) -> torch.Tensor:
        out = torch.empty(h.shape[0], self.out_features)
        for start in range(0, self.out_features, block):
            out[:, start:start + block] = h @ self.rows[start:start + block].float().T
        return out

    def _row(self, h: torch.Tensor) -> torch.Tensor:
        grid = None if self.broken else grid_input(h)
        if grid is None:
            self.full += 1
            return self._exact(h[None])[0]
        x, hat, s = grid
        y = torch.empty(2, self.out_features)
        for start, stop, packed in self._blocks:
            y[:, start:stop] = torch.ops.quantized.linear_dynamic(x, packed, True)
        scores = grid_output(y, s)
        size, off = float(h.norm()), float((h - hat).norm())
        bound = self.err * size + self.norm * (off + ROUNDING * (size + off))
        floor_of = scores - bound
        if self.protected.numel():
            floor_of[self.protected] = -math.inf
        floor = floor_of.max()
        picked = torch.nonzero(scores + bound >= floor).flatten()
        if self.protected.numel():
            picked = torch.unique(torch.cat([picked, self.protected]))
        if picked.numel() > self.limit:
            self.full += 1
            return self._exact(h[None])[0]
        exact = self.rows[picked].float() @ h
        self.calls += 1
        self.candidates += picked.numel()
        self.largest = max(self.largest, picked.numel())
        missed = (exact - scores[picked]).abs() > bound[picked]
        if bool(missed.any()):
            log.error("int8 head: %d candidate scores outside their bounds; every score exact from now on",
                      int(missed.sum()))
            self.broken = True
            self.full += 1
            return self._exact(h[None])[0]
        scores[picked] = exact
        return scores

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lead = x.shape[:-1]
        h = x.reshape(-1, self.in_features).float()
        if self.exact_all or h.shape[0] > 4:  # a batch of positions: one fp32 GEMM is cheaper than rows
            self.full += 1
            return self._exact(h).view(*lead, self.out_features)
        return torch.stack([self._row(row) for row in h]).view(*lead, self.out_features)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, int8 scores, exact candidates"


__all__ = ["Int8CandidateHead", "grid_input", "grid_output", "int8_gemm_available", "prepack_rows"]

"""The fp16w plan's output head: int8 scores with per-row bounds, the candidate rows exact
(assistant_core/policy/cpu_head.py). Greedy decoding must pick exactly the row the full fp32 product picks."""

from __future__ import annotations

import logging

import pytest

torch = pytest.importorskip("torch")

from assistant_core.policy.cpu_head import (  # noqa: E402
    Int8CandidateHead,
    grid_input,
    grid_output,
    int8_gemm_available,
    prepack_rows,
)

pytestmark = pytest.mark.skipif(not int8_gemm_available(), reason="fbgemm int8 GEMM is x86-only")  # CI is x86


def rows_with_near_ties(vocab=6000, dim=256, seed=0, large=True):
    """bf16 rows as a checkpoint holds them, with clusters of near-duplicates (ties the int8 scores cannot
    separate) and rows of very different sizes."""
    g = torch.Generator().manual_seed(seed)
    rows = torch.randn(vocab, dim, generator=g) * 0.02
    rows[:50] = rows[0] + torch.randn(50, dim, generator=g) * 1e-4  # fifty rows within rounding of each other
    if large:
        rows[100:110] *= 40  # large rows: large absolute errors
    rows[200] = 0  # an empty row (a padding token)
    return rows.to(torch.bfloat16)


def inputs(dim=256, seed=1):
    g = torch.Generator().manual_seed(seed)
    # small inputs too: the kernel raises a scale below 6.1e-5 to that, so the grid must not depend on the size
    out = [torch.randn(dim, generator=g) * scale for scale in (1e-3, 1.0, 7.0, 300.0, 1e-6, 1e-12)]
    spiky = torch.randn(dim, generator=g)
    spiky[5] = 400.0  # one huge feature (real hidden states have a few): a coarse grid for all others
    out.append(spiky)
    return out


@pytest.mark.parametrize("rows", [2, 3])
def test_the_grid_input_is_what_the_kernel_multiplies(rows):
    """The input on the grid (2 rows for the head, 3 in bench/bench_weight_formats.py) goes through fbgemm's int8
    GEMM without error: the product is the int8 weights times h^ to fp32 rounding, and h^ is within half a
    step of h (a step is s / 64^(rows-1))."""
    w = rows_with_near_ties(vocab=300).float()
    scale = (w.abs().amax(1) / 127).clamp_min(1e-30)
    q = torch.zeros(w.shape[0], w.shape[1] + 2, dtype=torch.int8)
    q[:, :-2] = torch.round(w / scale[:, None]).to(torch.int8)
    packed = prepack_rows(q, scale.double())
    dequant = q[:, :-2].double() * scale.double()[:, None]
    for h in inputs():
        x, hat, s = grid_input(h, rows)
        assert float((h - hat).abs().max()) <= s / 64 ** (rows - 1) / 2
        got = grid_output(torch.ops.quantized.linear_dynamic(x, packed, True), s).double()
        want = dequant @ hat.double()
        assert float((got - want).abs().max()) <= 1e-6 * float(dequant.abs().sum(1).max() * hat.abs().max())
    assert grid_input(torch.zeros(8), rows) is None and grid_input(torch.full((8,), float("nan")), rows) is None


def test_the_argmax_is_the_exact_one_and_every_score_is_within_its_bound():
    rows = rows_with_near_ties()
    head = Int8CandidateHead(rows, block=1000)
    exact_rows = rows.float()
    for h in inputs() + [rows[0].float() * 50, rows[3].float() * 50, rows[105].float()]:
        exact = exact_rows @ h
        got = head(h[None, None])[0, 0]
        assert int(got.argmax()) == int(exact.argmax())
        size = float(h.norm())
        error = (got - exact).abs()
        # the int8 rows are within 0.5 % of |w| each; with the input's grid error, about 1 % of |h||w| at most
        assert bool((error <= 0.02 * size * exact_rows.norm(dim=1) + 1e-6).all())
        assert float(error[int(exact.argmax())]) <= 1e-5 * float(exact.abs().max())  # the winner: exact
    stats = head.stats()
    assert stats["calls"] == 10 and stats["exact_calls"] == 0 and not stats["broken"]
    assert 1 <= stats["mean_candidates"] < 200  # a few rows computed again, not the vocabulary


def test_masked_rows_stay_exact_so_the_argmax_without_them_is_exact():
    """The runtime masks end-of-text while a minimum length is not reached: with it protected, the
    argmax of the rest is the exact one even when end-of-text is the top row by far."""
    rows = rows_with_near_ties(large=False)
    head = Int8CandidateHead(rows)
    eos = 300
    head.protect([eos, 10**9])  # an id outside the vocabulary is ignored
    # end-of-text wins by a wide margin; the runner-up is one of the fifty near-ties
    h = rows[eos].float() * 3000 + rows[0].float() * 1500
    exact = rows.float() @ h
    got = head(h[None])[0]
    assert int(exact.argmax()) == int(got.argmax()) == eos
    got[eos] = exact[eos] = float("-inf")
    assert int(got.argmax()) == int(exact.argmax())
    assert torch.allclose(got[int(exact.argmax())], exact[int(exact.argmax())], rtol=1e-5)


def test_exact_scores_and_too_many_candidates_compute_every_score():
    rows = rows_with_near_ties()
    exact = rows.float() @ inputs()[1]
    head = Int8CandidateHead(rows)
    with head.exact_scores():
        full = head(inputs()[1][None])[0]
    assert torch.allclose(full, exact, rtol=1e-5, atol=1e-6)
    assert head.stats()["exact_calls"] == 1 and not head.exact_all
    narrow = Int8CandidateHead(rows, limit=0)  # any candidate is too many: the full product instead
    assert torch.allclose(narrow(inputs()[1][None])[0], exact, rtol=1e-5, atol=1e-6)
    assert narrow.stats()["exact_calls"] == 1 and narrow.stats()["calls"] == 0
    positions = torch.stack(inputs()[:4] + [inputs()[1]] * 2)  # a batch of positions: one fp32 product
    assert torch.allclose(head(positions), positions @ rows.float().T, rtol=1e-5, atol=1e-5)
    for bad in (torch.zeros(256), torch.full((256,), float("nan"))):  # no grid: computed exactly, NaN stays NaN
        out = head(bad[None])[0]
        assert torch.equal(out.isnan(), (rows.float() @ bad).isnan())


def test_a_bound_that_fails_is_caught_and_the_head_goes_exact(caplog):
    """The runtime check: each candidate's exact score is compared with its bound. A head whose bounds are
    wrong (here: the measured row errors zeroed, as a kernel that quantized differently would make them)
    says so and computes every score exactly from then on, so a reply is never picked from a wrong bound."""
    rows = rows_with_near_ties()
    head = Int8CandidateHead(rows)
    head.err.zero_()
    head.norm.zero_()
    h = inputs()[2]
    with caplog.at_level(logging.ERROR, logger="assistant_core.policy.cpu_head"):
        out = head(h[None])[0]
    assert head.broken and "outside their bounds" in caplog.text
    assert torch.allclose(out, rows.float() @ h, rtol=1e-5, atol=1e-5)
    head(h[None])
    assert head.stats()["exact_calls"] == 2


def test_the_int8_matrix_is_held_once_in_row_blocks_and_the_rows_are_shared():
    rows = rows_with_near_ties(vocab=4096, dim=512)
    head = Int8CandidateHead(rows, block=1500)
    assert [(a, b) for a, b, _ in head._blocks] == [(0, 1500), (1500, 3000), (3000, 4096)]
    weight = torch.cat([torch.ops.quantized.linear_unpack(p)[0].dequantize() for *_, p in head._blocks])
    assert weight.shape == (4096, 514) and bool((weight[:, 512:] == 0).all())  # the two anchor columns
    scales = torch.cat([torch.ops.quantized.linear_unpack(p)[0].q_per_channel_scales() for *_, p in head._blocks])
    assert torch.allclose(scales.float(), (rows.float().abs().amax(1) / 127).clamp_min(1e-30), rtol=1e-6)
    assert float((weight[:, :512] - rows.float()).abs().max()) <= float(scales.max()) / 2 + 1e-9  # rounded, once
    assert head.rows.data_ptr() == rows.data_ptr()  # the embedding's matrix, not a copy


def test_only_a_tied_head_is_int8_scored_and_a_torch_without_the_packing_gets_the_fp16_head(monkeypatch, caplog):
    from assistant_core.policy import cpu_fp16w_modules as plan

    rows = rows_with_near_ties(vocab=500, dim=64)
    embedding = plan.Bf16Embedding(rows)
    x = torch.randn(1, 64)
    assert isinstance(plan.output_head(rows, None, embedding, tied=True), Int8CandidateHead)
    for untied in (plan.output_head(rows, None, embedding, tied=False),  # its own matrix: no rows to share
                   plan.output_head(rows, torch.zeros(500), embedding, tied=True),  # a bias
                   plan.output_head(rows, None, embedding, tied=True, candidates=False)):
        assert isinstance(untied, plan.BlockedFp16Head)

    def removed(*args, **kwargs):
        raise RuntimeError("quantized tensors were removed")

    monkeypatch.setattr(plan, "Int8CandidateHead", removed)
    with caplog.at_level(logging.WARNING, logger="assistant_core.policy.cpu_fp16w_modules"):
        head = plan.output_head(rows, None, embedding, tied=True)
    assert isinstance(head, plan.BlockedFp16Head) and "int8 output head unavailable" in caplog.text
    assert torch.allclose(head(x), x @ rows.float().T, rtol=1e-5, atol=1e-6)

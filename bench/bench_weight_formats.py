"""What 8-bit weights would cost a PhoneBuddy step in accuracy, and what they would save in time (issue 25).

    python bench/bench_weight_formats.py --folder CHECKPOINT [--size 0.8b|4b] [--observations N]
                                         [--tokens N] [--threads N] [--kernels] [--json OUT]

Why: on a CPU a generated token reads every decoder weight once, and the exact fp16 weights are at this
machine's memory bandwidth (bench_cpu_policy.py); one byte a weight instead of two is the only large gain
left, and it is not exact. Whether it is acceptable is a question about the real checkpoint, which cannot be
downloaded where the project is built: run this on the folder a user downloads, and on the random-weight one
bench_cpu_policy builds (`--keep DIR`), and compare.

Accuracy (always): for N observations (the benchmark's settings screen, 0-3 steps of history), the fp32
model's greedy reply is the reference; each format's decoder weights are rounded (and restored after), which is
what a kernel for that format computes, up to fp32 summation order (fp32 activations: no activation rounding,
so this is the format's own error). Per format:
- `logits_max_diff_pct`: the largest |difference| of the next-token logits after the prompt, in % of the
  largest |logit| (the tolerance issue 25 set at real size is 5 %; bench/results/cpu_policy.json "tolerance");
- `tokens_agreeing`: positions where the argmax is the reference's, teacher-forced on the reference reply;
- `same_action`: where the reference reply parses to an action, whether the format's own greedy reply parses
  to the same one (random weights write no parseable reply: then "none parsed").
Formats: `fp16` (the runtime's exact plan: the control, showing the method's floor), `int8-row` (one scale a
row: fbgemm's int8 GEMM), `int8-g128` and `int8-g32` (a scale per 128 or 32 weights of a row; g32 is
llama.cpp's Q8_0 layout). The output head is not rounded: the runtime's int8-scored head is exact already.

Time (`--kernels`): one generated token's decoder linears, each called with one row: fbgemm's fp16-weight GEMM
(today's plan) against its int8 GEMM on the same weights rounded per row, the input put on the grid of
assistant_core/policy/cpu_head.py (2 rows: 13 bits under the largest |input|; 3 rows: 19 bits), and ONNX
Runtime's block-quantized GEMM on random weights of the same shapes; in blocks, cycled, medians of `--repeats`. Linears as the checkpoint has them (the runtime fuses some: fewer, larger calls).
Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

FORMATS = ("fp16", "int8-row", "int8-g128", "int8-g32")


def rounded(weight, fmt: str):
    """`weight` (fp32) as the format stores it, back in fp32."""
    import torch

    if fmt == "fp16":
        return weight.half().float()
    rows, cols = weight.shape
    group = cols if fmt == "int8-row" else int(fmt.split("-g")[1])
    if cols % group:
        group = cols
    parts = weight.reshape(rows, cols // group, group)
    scale = (parts.abs().amax(-1, keepdim=True) / 127).clamp_min(torch.finfo(torch.float32).tiny)
    return (torch.round(parts / scale).clamp_(-127, 127) * scale).reshape(rows, cols)


def decoder_linears(model) -> list:
    import torch

    return [m for m in model.model.language_model.modules() if isinstance(m, torch.nn.Linear)]


def cases(profile, count: int) -> list:
    from bench_cpu_policy import GOAL, history, observation

    from assistant_core.policy.prompt import build_prompt

    return [(observation(i), build_prompt(GOAL, observation(i), history(i % 4), profile)) for i in range(count)]


def accuracy(args) -> dict:
    import torch
    from bench_cpu_policy import config_for
    from transformers import AutoModelForImageTextToText

    from assistant_core.policy.hf_compat import load_processor
    from assistant_core.policy.parsing import parse_reply
    from assistant_core.policy.profiles import get_profile

    profile = get_profile(config_for(args.size)["profile"])
    processor = load_processor(args.folder)
    model = AutoModelForImageTextToText.from_pretrained(args.folder, dtype=torch.float32).eval()
    linears = decoder_linears(model)
    originals = [m.weight.detach().clone() for m in linears]

    def action(obs, ids) -> str | None:
        text = processor.tokenizer.decode(ids, skip_special_tokens=False)
        try:
            return repr(parse_reply(text, obs.width, obs.height, profile).action)
        except Exception:  # any reply that does not parse counts as none
            return None

    results = {fmt: {"diff": [], "agree": 0, "positions": 0, "same": 0, "parsed": 0} for fmt in FORMATS}
    largest = 0.0
    for obs, prompt in cases(profile, args.observations):
        inputs = processor.apply_chat_template(prompt.hf_messages(), add_generation_prompt=True, tokenize=True,
                                               return_dict=True, return_tensors="pt")
        n = inputs["input_ids"].shape[1]
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=args.tokens, do_sample=False)
        reply = out[0, n:]
        ref_action = action(obs, reply)
        forced = dict(inputs, input_ids=out, attention_mask=torch.ones_like(out))
        if "mm_token_type_ids" in inputs:
            forced["mm_token_type_ids"] = torch.cat([inputs["mm_token_type_ids"],
                                                     torch.zeros_like(reply)[None]], dim=1)
        keep = reply.shape[0] + 1

        def logits(forced=forced, keep=keep):
            with torch.inference_mode():
                return model(**forced, logits_to_keep=keep).logits[0].float()

        ref = logits()
        largest = max(largest, float(ref[0].abs().max()))
        for fmt in FORMATS:
            with torch.no_grad():
                for m, w in zip(linears, originals, strict=True):
                    m.weight.copy_(rounded(w, fmt))
            got = logits()
            row = results[fmt]
            row["diff"].append(float((got[0] - ref[0]).abs().max()) / float(ref[0].abs().max()))
            row["agree"] += int((got[:-1].argmax(-1) == reply).sum())
            row["positions"] += keep - 1
            if ref_action is not None:
                with torch.inference_mode():
                    mine = model.generate(**inputs, max_new_tokens=args.tokens, do_sample=False)[0, n:]
                row["parsed"] += 1
                row["same"] += int(action(obs, mine) == ref_action)
            print(f"  {fmt:9s} logits {row['diff'][-1] * 100:5.2f} %", flush=True)
        with torch.no_grad():
            for m, w in zip(linears, originals, strict=True):
                m.weight.copy_(w)
    return {fmt: {"logits_max_diff_pct": round(max(r["diff"]) * 100, 2),
                  "tokens_agreeing": f"{r['agree']}/{r['positions']}",
                  "same_action": f"{r['same']}/{r['parsed']}" if r["parsed"] else "none parsed"}
            for fmt, r in results.items()} | {"largest_logit": round(largest, 4)}


def kernels(args) -> dict:
    import torch
    from safetensors import safe_open

    from assistant_core.policy.cpu_head import grid_input, grid_output, int8_gemm_available, prepack_rows

    if not int8_gemm_available():
        return {"error": "this torch has no fbgemm int8 GEMM"}
    weights = []
    for file in sorted(Path(args.folder).glob("*.safetensors")):
        with safe_open(str(file), "pt") as f:
            for name in f.keys():  # noqa: SIM118 - safe_open has no __iter__
                # every decoder layer's 2-D weight is a linear's (norms are 1-D, the conv 3-D)
                if "language_model.layers." in name and name.endswith(".weight") and len(f.get_slice(name).get_shape()) == 2:
                    weights.append(f.get_tensor(name))
    fp16, int8, rows_of = [], [], []
    for w in weights:
        w = w.float()
        fp16.append(torch.ops.quantized.linear_prepack_fp16(w, None))
        scale = (w.abs().amax(1) / 127).clamp_min(torch.finfo(torch.float32).tiny)
        q = torch.zeros(w.shape[0], w.shape[1] + 2, dtype=torch.int8)
        q[:, :-2] = torch.round(w / scale[:, None]).clamp_(-127, 127).to(torch.int8)
        int8.append((w.shape[1], prepack_rows(q, scale.double())))
        rows_of.append(w.shape[0])
    params = sum(w.numel() for w in weights)
    del weights
    inputs = {k: torch.randn(k) for k, _ in int8}

    def run_fp16():
        for (k, _), packed in zip(int8, fp16, strict=True):
            torch.ops.quantized.linear_dynamic_fp16(inputs[k][None], packed)

    def run_int8(rows):
        def go():
            for k, packed in int8:
                x, _, s = grid_input(inputs[k], rows)
                grid_output(torch.ops.quantized.linear_dynamic(x, packed, True), s)
        return go

    timed = {"fp16": run_fp16, "int8 (2-row grid)": run_int8(2), "int8 (3-row grid)": run_int8(3)}
    shapes = [(n, k) for (k, _), n in zip(int8, rows_of, strict=True)]
    missing = None
    for bits in (8, 4):
        run = onnxruntime_run(shapes, bits, args.threads)
        if isinstance(run, str):
            missing = run
        else:
            timed[f"onnxruntime MatMulNBits {bits}-bit g32"] = run
    samples = {name: [] for name in timed}
    # In blocks, cycled, with a pause between: torch's OpenMP threads and onnxruntime's pool each spin for a
    # while after their work, and on two cores a runtime called right after the other one is slowed by it.
    cycles = 3
    for _ in range(cycles):
        for name, fn in timed.items():
            time.sleep(0.5)
            fn()
            for _ in range(max(1, args.repeats // cycles)):
                t0 = time.perf_counter()
                fn()
                samples[name].append((time.perf_counter() - t0) * 1000)
    ms = {name: round(statistics.median(v), 1) for name, v in samples.items()}
    out = {"linears": len(int8), "params_m": round(params / 1e6, 1), "ms_per_token": ms,
           "ratio_vs_fp16": {name: round(ms["fp16"] / v, 2) for name, v in ms.items()}}
    if missing:
        out["onnxruntime"] = missing
    return out


def onnxruntime_run(shapes: list[tuple[int, int]], bits: int, threads: int) -> Callable[[], None] | str:
    """One token through linears of these shapes in ONNX Runtime's block-quantized GEMM (MatMulNBits, 32
    weights a scale, int8 arithmetic: `accuracy_level` 4), random weights; a sentence where it cannot run.
    onnxruntime comes with faster-whisper; building the graph needs the `onnx` package (`pip install onnx`),
    which the app does not."""
    try:
        import numpy as np
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as error:
        return f"not measured: {error.name} is not installed"
    block = 32
    rng = np.random.default_rng(0)
    sizes = sorted({k for _, k in shapes})
    nodes, weights, outputs = [], [], []
    for i, (n, k) in enumerate(shapes):
        blocks = (k + block - 1) // block
        weights += [numpy_helper.from_array(rng.integers(0, 256, (n, blocks, block * bits // 8), dtype=np.uint8), f"b{i}"),
                    numpy_helper.from_array((rng.random(n * blocks) * 0.01).astype(np.float32), f"s{i}")]
        nodes.append(helper.make_node("MatMulNBits", [f"x{k}", f"b{i}", f"s{i}"], [f"y{i}"], domain="com.microsoft",
                                      K=k, N=n, bits=bits, block_size=block, accuracy_level=4))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, n]))
    graph = helper.make_graph(nodes, "linears", [helper.make_tensor_value_info(f"x{k}", TensorProto.FLOAT, [1, k])
                                                 for k in sizes], outputs, weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10  # what onnxruntime 1.23 reads
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {f"x{k}": rng.standard_normal((1, k)).astype(np.float32) for k in sizes}
    for _ in range(3):
        session.run(None, feed)
    return lambda: session.run(None, feed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", required=True, help="a checkpoint folder (real, or bench_cpu_policy's random one)")
    parser.add_argument("--size", default="0.8b", choices=("0.8b", "4b"), help="which profile's prompt")
    parser.add_argument("--observations", type=int, default=4, help="0: the kernel timings alone")
    parser.add_argument("--tokens", type=int, default=12, help="greedy reply length (about 120 for a full real reply)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--kernels", action="store_true", help="also time one token's decoder linears")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    if not (Path(args.folder) / "config.json").is_file():
        print(f"no checkpoint at {args.folder} (config.json missing)", file=sys.stderr)
        return 2
    report = {"folder": str(args.folder), "threads": args.threads, "observations": args.observations,
              "tokens": args.tokens, "measured_at": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())}
    if args.kernels:
        report["kernels"] = kernels(args)
        print(json.dumps(report["kernels"], indent=1), flush=True)
    if args.observations <= 0:  # --kernels alone
        _write(args, report)
        return 0
    report["accuracy"] = accuracy(args)
    print(f"{'format':10s} {'logits (% of largest)':>22s} {'tokens agreeing':>16s} {'same action':>12s}")
    for fmt in FORMATS:
        r = report["accuracy"][fmt]
        print(f"{fmt:10s} {r['logits_max_diff_pct']:22.2f} {r['tokens_agreeing']:>16s} {r['same_action']:>12s}")
    _write(args, report)
    return 0


def _write(args, report: dict) -> None:
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/python3
"""Ours vs PyTorch CPU, per model and precision, in one run on this machine (issues 9 and 27,
BRIEF section 4).

For each model (default: the real models of tests/realmodels plus a few more, and two
transformers of export_torchvision.BEYOND: vit_small and gpt_decoder) this script
  1. exports it to ONNX with fixed random weights and a fixed random input, exactly as
     tests/realmodels does (scripts/export_torchvision.py; gpt_decoder's input is int64
     token ids),
  2. compiles it with npu-compile once per precision (compile time is not counted):
       fp32   as it is,
       int8   --quantize int8 --calibration input.npy (calibrated on the same input),
       fp16   --precision fp16,   bf16   --precision bf16,
     and runs each package R times (rounds) with
       npu-submit MODEL.npub --input input=input.npy --repeat N --warmup K --json
     taking the median latency of the rounds' N timed inferences together (warm: submit ->
     emulate -> result) and the median of the rounds' first inferences of a fresh process
     (cold: loading is not in it,
     the first run's page faults, weight packing and scratch allocation are; the report's
     host time of that run, measured with the per-command profile on), and compares the
     output with PyTorch's fp32 output (max abs diff),
  3. times the same PyTorch model on the same input in fp32 and in int8: FX graph mode
     post-training quantization (prepare_fx/convert_fx, the 'onednn' qconfig mapping with the
     default backend config; Debian's PyTorch has no FBGEMM), calibrated on the same input,
     run on the oneDNN quantized engine. Warm: per round K warm-up then N runs with 1 and
     with 2 intra-op threads; the median of the rounds' runs, the better thread count. Cold:
     the first run of a fresh copy (fp32, the rounds' median) or of the freshly converted
     model (int8, once), with 2 threads,
  4. ours and PyTorch take turns round by round (odd rounds PyTorch first): this machine's
     speed drifts by tens of percent within minutes, and measuring one after the other put
     that drift into the ratios (ResNet-18 fp32 0.87x to 1.35x PyTorch between runs),
and prints three tables: warm milliseconds with the ratios, cold milliseconds, and per
precision the modeled device cycles, our CPU time per inference and the output difference;
then geometric means of the ratios (over every model that ran, and over the issue-27 set:
ResNet-18, MobileNetV2, ResNet-50, EfficientNet-B0). Ratios below 1 mean we are faster.

Usage: bench/vs_pytorch.py [--build build] [--models resnet18,mobilenet_v2,...]
                           [--precisions fp32,int8,fp16,bf16] [--no-torch-int8]
                           [--repeat 10] [--warmup 2] [--rounds 3] [--workdir DIR]
                           [--json FILE]
Needs Debian's python3-torch, python3-torchvision, python3-onnx (make deps-realmodels).
"""
import argparse
import copy
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import export_torchvision  # noqa: E402  (the models exactly as tests/realmodels builds them)

DEFAULT_MODELS = ["resnet18", "resnet50", "efficientnet_b0", "mobilenet_v2",
                  "mobilenet_v3_large", "squeezenet1_1", "vit_small", "gpt_decoder"]
PRECISIONS = ["fp32", "int8", "fp16", "bf16"]
ISSUE27_MODELS = ["resnet18", "mobilenet_v2", "resnet50", "efficientnet_b0"]


def die(msg):
    sys.exit(f"vs_pytorch.py: {msg}")


def find_tool(build, name):
    for c in (os.path.join(build, "tools", name, name), os.path.join(build, "bin", name)):
        if os.access(c, os.X_OK):
            return c
    die(f"no {name} under {build} (build it first: cmake --build {build} --target {name})")


def torch_model(name):
    """The same model (same weights) export_torchvision.py exports."""
    return export_torchvision.build_model(name)[0].eval()


def first_line(e):
    msg = str(e).strip()
    return msg.splitlines()[0][:120] if msg else repr(e)


def time_once(model, x):
    with torch.no_grad():
        s = time.perf_counter()
        model(x)
        return (time.perf_counter() - s) * 1e3


def time_torch(model, x, threads, warmup, repeat):
    """The repeat timed runs' milliseconds after warmup untimed ones, on `threads` threads."""
    torch.set_num_threads(threads)
    with torch.no_grad():
        for _ in range(max(warmup, 1)):
            model(x)
        times = []
        for _ in range(repeat):
            s = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - s) * 1e3)
    return times


def best_of_threads(samples):
    """(median ms, threads) of the better thread count; samples: {threads: [ms, ...]}."""
    return min((float(np.median(v)), t) for t, v in samples.items())


def torch_int8(model, x):
    """FX graph mode post-training quantization on the oneDNN engine, calibrated on x."""
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    torch.backends.quantized.engine = "onednn"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prepared = prepare_fx(copy.deepcopy(model), get_default_qconfig_mapping("onednn"),
                              example_inputs=(x,))
        with torch.no_grad():
            prepared(x)
        return convert_fx(prepared)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        err = (p.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise RuntimeError(f"{os.path.basename(cmd[0])} exit {p.returncode}: {err}")
    return p.stdout


def compile_flags(precision, d):
    if precision == "int8":
        return ["--quantize", "int8", "--calibration", os.path.join(d, "input.npy")]
    if precision in ("fp16", "bf16"):
        return ["--precision", precision]
    return []


def package(d, precision):
    return os.path.join(d, f"model_{precision}.npub")


def compile_ours(tools, d, precision):
    run([tools[0], os.path.join(d, "model.onnx"), "-o", package(d, precision)] +
        compile_flags(precision, d))


def measure_ours(tools, d, precision, args):
    """One round of one precision of one model: npu-submit in benchmark mode, a fresh process."""
    pkg = package(d, precision)
    out_dir = os.path.join(d, f"out_{precision}")
    report = json.loads(run([tools[1], pkg, "--input", f"input={d}/input.npy",
                             "--output-dir", out_dir, "--repeat", str(args.repeat),
                             "--warmup", str(args.warmup), "--json"]))
    b = report["benchmark"]
    got = np.load(os.path.join(out_dir, "output.npy"))
    want = np.load(os.path.join(d, "expected.npy"))
    return dict(samples=b["latency_ms"]["samples"], cold_ms=report["host_ns"] / 1e6,
                cycles=b["device_cycles"],
                cpu_ms=(b["cpu_user_s"] + b["cpu_sys_s"]) * 1e3 / b["repeat"],
                faults=b["minor_faults_per_inference"],
                max_abs_diff=float(np.max(np.abs(got.astype(np.float64) - want))))


def pool_ours(rounds):
    """The rounds of one precision as one result: warm = the median of every round's timed
    inferences, cold = the median of the rounds' first inferences."""
    samples = [t for r in rounds for t in r["samples"]]
    return dict(ms=float(np.median(samples)), min_ms=float(min(samples)),
                cold_ms=float(np.median([r["cold_ms"] for r in rounds])),
                cycles=rounds[-1]["cycles"],
                cpu_ms=float(np.mean([r["cpu_ms"] for r in rounds])),
                faults=float(np.mean([r["faults"] for r in rounds])),
                max_abs_diff=max(r["max_abs_diff"] for r in rounds), rounds=len(rounds))


class TorchRuns:
    """PyTorch fp32 (and int8) of one model on its input, measured round by round between ours:
    each round times the warm runs with 1 and with 2 intra-op threads and a cold fp32 run of a
    fresh copy; the int8 model is converted (and its cold run timed, 2 threads) once."""

    def __init__(self, name, d, with_int8):
        self.x = torch.from_numpy(np.load(os.path.join(d, "input.npy")))
        self.model = torch_model(name)
        self.with_int8 = with_int8 and self.x.dtype == torch.float32
        self.q = None
        self.res = {}
        self.warm = {"fp32": {1: [], 2: []}, "int8": {1: [], 2: []}}
        self.cold = []
        self.int8_failed = {}  # threads -> the error

    def round(self, args):
        torch.set_num_threads(2)
        self.cold.append(time_once(copy.deepcopy(self.model), self.x))
        for t in (1, 2):
            self.warm["fp32"][t] += time_torch(self.model, self.x, t, args.warmup, args.repeat)
        if not self.with_int8:
            return
        if self.q is None:
            try:
                torch.set_num_threads(2)
                self.q = torch_int8(self.model, self.x)
                self.res["int8_cold_ms"] = time_once(self.q, self.x)
            except Exception as e:  # noqa: BLE001 (FX cannot trace some models: report, go on)
                self.with_int8 = False
                self.res["int8_error"] = first_line(e)
                return
        # A thread count the quantized engine fails on (oneDNN on some AMD CPUs cannot build a
        # reorder for one thread) is reported and left out of the later rounds; the others and
        # fp32 keep their numbers.
        for t in [t for t in (1, 2) if t not in self.int8_failed]:
            try:
                self.warm["int8"][t] += time_torch(self.q, self.x, t, args.warmup, args.repeat)
            except RuntimeError as e:
                self.int8_failed[t] = first_line(e)
                self.warm["int8"][t] = []
        if len(self.int8_failed) == 2:
            self.with_int8 = False
            self.res["int8_error"] = "; ".join(f"{t} thread(s): {m}"
                                               for t, m in self.int8_failed.items())

    def result(self):
        res = dict(self.res)
        res["fp32_cold_ms"] = float(np.median(self.cold))
        res["fp32_ms"], res["fp32_threads"] = best_of_threads(self.warm["fp32"])
        int8 = {t: v for t, v in self.warm["int8"].items() if v}
        if int8:
            res["int8_ms"], res["int8_threads"] = best_of_threads(int8)
        if self.int8_failed:
            res["int8_failed_threads"] = {str(t): m for t, m in self.int8_failed.items()}
        return res


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def print_table(hdr, table):
    w = [max(len(str(t[i])) for t in table + [hdr]) for i in range(len(hdr))]
    print("| " + " | ".join(h.ljust(w[i]) for i, h in enumerate(hdr)) + " |")
    print("|" + "|".join("-" * (x + 2) for x in w) + "|")
    for t in table:
        print("| " + " | ".join(str(v).ljust(w[i]) for i, v in enumerate(t)) + " |")


def fmt(v, spec=".1f", suffix=""):
    return "-" if v is None else f"{v:{spec}}{suffix}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--precisions", default=",".join(PRECISIONS),
                    help="ours: any of fp32,int8,fp16,bf16 (default all)")
    ap.add_argument("--no-torch-int8", action="store_true", help="skip PyTorch int8")
    ap.add_argument("--repeat", type=int, default=10, help="timed inferences (default 10)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed inferences first (default 2)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds per model, ours and PyTorch in turn (default 3)")
    ap.add_argument("--workdir", help="keep exports and packages here (default: a temp dir)")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    args = ap.parse_args()
    if args.repeat < 1 or args.warmup < 0 or args.rounds < 1:
        die("--repeat and --rounds must be at least 1 and --warmup at least 0")
    precisions = [p for p in args.precisions.split(",") if p]
    for p in precisions:
        if p not in PRECISIONS:
            die(f"unknown precision '{p}' (one of {','.join(PRECISIONS)})")
    tools = (find_tool(args.build, "npu-compile"), find_tool(args.build, "npu-submit"))
    workdir = args.workdir or tempfile.mkdtemp(prefix="npu-vs-pytorch.")
    os.makedirs(workdir, exist_ok=True)
    models = [m for m in args.models.split(",") if m]
    for m in models:
        if m not in export_torchvision.BEYOND and not hasattr(torchvision.models, m):
            die(f"unknown model '{m}' (neither torchvision's nor export_torchvision.BEYOND's)")

    print(f"vs_pytorch: {len(models)} models x {','.join(precisions)}, {args.rounds} rounds of "
          f"{args.warmup} warm-up + {args.repeat} timed inferences each, work dir {workdir}", flush=True)
    rows = []
    for m in models:
        row = {"model": m, "ours": {}, "errors": {}}
        rows.append(row)
        d = os.path.join(workdir, m)
        try:
            if not os.path.exists(os.path.join(d, "model.onnx")):
                subprocess.run([sys.executable,
                                os.path.join(ROOT, "scripts", "export_torchvision.py"),
                                workdir, "--models", m, "--runs", "1"],
                               check=True, capture_output=True, text=True)
        except (subprocess.CalledProcessError, OSError) as e:
            row["errors"]["export"] = str(getattr(e, "stderr", "") or e).strip()[-160:]
            print(f"  {m}: export FAILED", flush=True)
            continue
        # Ours and PyTorch take turns, round by round (odd rounds PyTorch first), so that both
        # see the same minutes of a machine whose speed drifts; each pools its rounds.
        rounds = {}
        for p in precisions:
            try:
                compile_ours(tools, d, p)
                rounds[p] = []
            except (RuntimeError, OSError) as e:
                row["errors"][p] = str(e).strip().splitlines()[-1][:160]
        torch_runs = None
        try:
            torch_runs = TorchRuns(m, d, not args.no_torch_int8)
        except (RuntimeError, OSError, ValueError) as e:
            row["errors"]["torch"] = str(e).strip().splitlines()[-1][:160]
        for k in range(args.rounds):
            steps = ["ours", "torch"] if k % 2 == 0 else ["torch", "ours"]
            for step in steps:
                if step == "torch" and torch_runs is not None:
                    try:
                        torch_runs.round(args)
                    except (RuntimeError, OSError, ValueError) as e:
                        row["errors"]["torch"] = str(e).strip().splitlines()[-1][:160]
                        torch_runs = None
                for p in list(rounds) if step == "ours" else []:
                    try:
                        rounds[p].append(measure_ours(tools, d, p, args))
                    except (RuntimeError, OSError, KeyError, ValueError) as e:
                        row["errors"][p] = str(e).strip().splitlines()[-1][:160]
                        del rounds[p]
        for p, r in rounds.items():
            row["ours"][p] = pool_ours(r)
        if torch_runs is not None:
            row["torch"] = torch_runs.result()
        parts = [f"{p} {row['ours'][p]['ms']:.1f} ms" if p in row["ours"] else f"{p} FAILED"
                 for p in precisions]
        t = row.get("torch", {})
        parts.append(f"PyTorch fp32 {fmt(t.get('fp32_ms'))} int8 {fmt(t.get('int8_ms'))} ms")
        print(f"  {m}: " + ", ".join(parts), flush=True)

    def ours(r, p, key="ms"):
        return r["ours"].get(p, {}).get(key)

    def ratio(a, b):
        return a / b if a is not None and b is not None else None

    ratio_cols = [
        ("int8/PT int8", lambda r: ratio(ours(r, "int8"), r.get("torch", {}).get("int8_ms"))),
        ("int8/PT fp32", lambda r: ratio(ours(r, "int8"), r.get("torch", {}).get("fp32_ms"))),
        ("fp32/PT fp32", lambda r: ratio(ours(r, "fp32"), r.get("torch", {}).get("fp32_ms"))),
        ("int8/fp32", lambda r: ratio(ours(r, "int8"), ours(r, "fp32"))),
        ("fp16/fp32", lambda r: ratio(ours(r, "fp16"), ours(r, "fp32"))),
        ("bf16/fp32", lambda r: ratio(ours(r, "bf16"), ours(r, "fp32"))),
    ]
    print(f"\nWarm: median ms per inference over {args.rounds} rounds of {args.repeat} "
          "(PyTorch: best of 1 and 2 threads)\n")
    hdr = ["model"] + [f"ours {p}" for p in precisions] + ["PT fp32", "PT int8"] + \
        [c for c, _ in ratio_cols]
    table = []
    for r in rows:
        t = r.get("torch", {})
        line = [r["model"]] + [fmt(ours(r, p)) for p in precisions]
        line.append(fmt(t.get("fp32_ms")) + (f" ({t['fp32_threads']}t)" if "fp32_ms" in t else ""))
        line.append(fmt(t.get("int8_ms")) + (f" ({t['int8_threads']}t)" if "int8_ms" in t else ""))
        line += [fmt(f(r), ".2f", "x") for _, f in ratio_cols]
        table.append(line)
    for label, subset in (("geometric mean, all", [r["model"] for r in rows]),
                          ("geometric mean, issue-27 set", ISSUE27_MODELS)):
        sel = [r for r in rows if r["model"] in subset]
        line = [label] + [""] * (len(precisions) + 2)
        for _, f in ratio_cols:
            vals = [f(r) for r in sel if f(r) is not None]
            line.append(fmt(geomean(vals), ".2f", "x") + (f" ({len(vals)})" if vals else ""))
        table.append(line)
    print_table(hdr, table)

    print("\nCold: the first inference of a fresh process (ours) or model (PyTorch), ms; the "
          "median of the rounds (PyTorch int8: the first round's)\n")
    hdr = ["model"] + [f"ours {p}" for p in precisions] + ["PT fp32", "PT int8"] + \
        [f"{p} cold/warm" for p in precisions]
    table = []
    for r in rows:
        t = r.get("torch", {})
        table.append([r["model"]] + [fmt(ours(r, p, "cold_ms")) for p in precisions] +
                     [fmt(t.get("fp32_cold_ms")), fmt(t.get("int8_cold_ms"))] +
                     [fmt(ratio(ours(r, p, "cold_ms"), ours(r, p)), ".2f", "x")
                      for p in precisions])
    print_table(hdr, table)

    print("\nPer precision: device cycles, our CPU ms per inference (both lanes), minor page "
          "faults per inference, max abs diff vs PyTorch fp32\n")
    hdr = ["model", "precision", "device cycles", "our CPU ms", "faults/inf", "max abs diff"]
    table = []
    for r in rows:
        for p in precisions:
            o = r["ours"].get(p)
            if o is None:
                table.append([r["model"], p, "-", "-", "-",
                              "FAILED: " + r["errors"].get(p, "?")])
                continue
            table.append([r["model"], p, f"{o['cycles']:,}", f"{o['cpu_ms']:.1f}",
                          f"{o['faults']:.0f}", f"{o['max_abs_diff']:.1e}"])
        if "int8_error" in r.get("torch", {}):
            table.append([r["model"], "PT int8", "-", "-", "-",
                          "FAILED: " + r["torch"]["int8_error"]])
        else:
            for t, msg in r.get("torch", {}).get("int8_failed_threads", {}).items():
                table.append([r["model"], f"PT int8 {t}t", "-", "-", "-", "FAILED: " + msg])
    print_table(hdr, table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    failed = any(p not in r["ours"] for r in rows for p in precisions)
    return 1 if failed or any("torch" not in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

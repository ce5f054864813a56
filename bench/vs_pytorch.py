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
     and runs each package with
       npu-submit MODEL.npub --input input=input.npy --repeat N --warmup K --json
     taking the median latency of the N timed inferences (warm: submit -> emulate -> result,
     one process) and the first inference of the fresh process (cold: loading is not in it,
     the first run's page faults, weight packing and scratch allocation are; the report's
     host time of that run, measured with the per-command profile on), and compares the
     output with PyTorch's fp32 output (max abs diff),
  3. times the same PyTorch model on the same input in fp32 and in int8: FX graph mode
     post-training quantization (prepare_fx/convert_fx, the 'onednn' qconfig mapping with the
     default backend config; Debian's PyTorch has no FBGEMM), calibrated on the same input,
     run on the oneDNN quantized engine. Warm: K warm-up then the median of N runs with 1 and
     with 2 intra-op threads, the better of the two. Cold: the first run of a fresh copy (fp32)
     or of the freshly converted model (int8), with 2 threads,
and prints three tables: warm milliseconds with the ratios, cold milliseconds, and per
precision the modeled device cycles, our CPU time per inference and the output difference;
then geometric means of the ratios (over every model that ran, and over the issue-27 set:
ResNet-18, MobileNetV2, ResNet-50, EfficientNet-B0). Ratios below 1 mean we are faster.

Usage: bench/vs_pytorch.py [--build build] [--models resnet18,mobilenet_v2,...]
                           [--precisions fp32,int8,fp16,bf16] [--no-torch-int8]
                           [--repeat 10] [--warmup 2] [--workdir DIR] [--json FILE]
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


def time_once(model, x):
    with torch.no_grad():
        s = time.perf_counter()
        model(x)
        return (time.perf_counter() - s) * 1e3


def time_torch(model, x, threads, warmup, repeat):
    torch.set_num_threads(threads)
    with torch.no_grad():
        for _ in range(max(warmup, 1)):
            model(x)
        times = []
        for _ in range(repeat):
            s = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - s) * 1e3)
    return float(np.median(times))


def best_of_threads(model, x, warmup, repeat):
    t1 = time_torch(model, x, 1, warmup, repeat)
    t2 = time_torch(model, x, 2, warmup, repeat)
    return (t1, 1) if t1 <= t2 else (t2, 2)


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


def run_ours(tools, d, precision, args):
    """One precision of one model: compile, then npu-submit in benchmark mode."""
    compile_tool, submit_tool = tools
    pkg = os.path.join(d, f"model_{precision}.npub")
    run([compile_tool, os.path.join(d, "model.onnx"), "-o", pkg] + compile_flags(precision, d))
    out_dir = os.path.join(d, f"out_{precision}")
    report = json.loads(run([submit_tool, pkg, "--input", f"input={d}/input.npy",
                             "--output-dir", out_dir, "--repeat", str(args.repeat),
                             "--warmup", str(args.warmup), "--json"]))
    b = report["benchmark"]
    got = np.load(os.path.join(out_dir, "output.npy"))
    want = np.load(os.path.join(d, "expected.npy"))
    return dict(ms=b["latency_ms"]["median"], min_ms=b["latency_ms"]["min"],
                cold_ms=report["host_ns"] / 1e6, cycles=b["device_cycles"],
                cpu_ms=(b["cpu_user_s"] + b["cpu_sys_s"]) * 1e3 / b["repeat"],
                faults=b["minor_faults_per_inference"],
                max_abs_diff=float(np.max(np.abs(got.astype(np.float64) - want))))


def run_torch(name, d, args, with_int8):
    """PyTorch fp32 (and int8) on the model's input: warm best of 1 and 2 threads, and cold."""
    x = torch.from_numpy(np.load(os.path.join(d, "input.npy")))
    res = {}
    model = torch_model(name)
    torch.set_num_threads(2)
    res["fp32_cold_ms"] = time_once(copy.deepcopy(model), x)
    res["fp32_ms"], res["fp32_threads"] = best_of_threads(model, x, args.warmup, args.repeat)
    if with_int8 and x.dtype == torch.float32:
        try:
            torch.set_num_threads(2)
            q = torch_int8(model, x)
            res["int8_cold_ms"] = time_once(q, x)
            res["int8_ms"], res["int8_threads"] = best_of_threads(q, x, args.warmup, args.repeat)
        except Exception as e:  # noqa: BLE001 (FX cannot trace some models: report and go on)
            res["int8_error"] = str(e).strip().splitlines()[0][:120] if str(e).strip() else repr(e)
    return res


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


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
    ap.add_argument("--workdir", help="keep exports and packages here (default: a temp dir)")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    args = ap.parse_args()
    if args.repeat < 1 or args.warmup < 0:
        die("--repeat must be at least 1 and --warmup at least 0")
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

    print(f"vs_pytorch: {len(models)} models x {','.join(precisions)}, {args.warmup} warm-up + "
          f"{args.repeat} timed inferences each, work dir {workdir}", flush=True)
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
        for p in precisions:
            try:
                row["ours"][p] = run_ours(tools, d, p, args)
            except (RuntimeError, OSError, KeyError, ValueError) as e:
                row["errors"][p] = str(e).strip().splitlines()[-1][:160]
        try:
            row["torch"] = run_torch(m, d, args, not args.no_torch_int8)
        except (RuntimeError, OSError, ValueError) as e:
            row["errors"]["torch"] = str(e).strip().splitlines()[-1][:160]
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
    print("\nWarm: median ms per inference (PyTorch: best of 1 and 2 threads)\n")
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

    print("\nCold: the first inference of a fresh process (ours) or model (PyTorch), ms\n")
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
    print_table(hdr, table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    failed = any(p not in r["ours"] for r in rows for p in precisions)
    return 1 if failed or any("torch" not in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

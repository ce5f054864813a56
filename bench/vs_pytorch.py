#!/usr/bin/python3
"""Ours vs PyTorch CPU, per model, in one run on this machine (issue 9, BRIEF section 4).

For each model (default: the real models of tests/realmodels plus a few more, and two
transformers of export_torchvision.BEYOND: vit_small and gpt_decoder) this script
  1. exports it to ONNX with fixed random weights and a fixed random input, exactly as
     tests/realmodels does (scripts/export_torchvision.py; gpt_decoder's input is int64
     token ids),
  2. compiles it with npu-compile (compile time is not counted) and runs it with
       npu-submit MODEL.npub --input input=input.npy --repeat N --warmup K --json
     taking the median latency of the N timed inferences (submit -> emulate -> result,
     warm, one process), and checks the output against PyTorch's (max abs diff),
  3. times the same PyTorch model on the same input: K warm-up then the median of N runs,
     with 1 and with 2 intra-op threads, and keeps the better of the two,
and prints the table: ours ms, PyTorch ms (threads), ratio = ours / PyTorch, the modeled
device cycles, our CPU time, context switches and minor page faults per inference; then the
geometric mean of the ratios. Ratios below 1 mean the emulator is faster than PyTorch.

Usage: bench/vs_pytorch.py [--build build] [--models resnet18,mobilenet_v2,...]
                           [--repeat 10] [--warmup 2] [--workdir DIR] [--json FILE]
Needs Debian's python3-torch, python3-torchvision, python3-onnx (make deps-realmodels).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import export_torchvision  # noqa: E402  (the models exactly as tests/realmodels builds them)

DEFAULT_MODELS = ["resnet18", "resnet50", "efficientnet_b0", "mobilenet_v2",
                  "mobilenet_v3_large", "squeezenet1_1", "vit_small", "gpt_decoder"]


def die(msg):
    sys.exit(f"vs_pytorch.py: {msg}")


def find_tool(build, name):
    for c in (os.path.join(build, "tools", name, name), os.path.join(build, "bin", name)):
        if os.access(c, os.X_OK):
            return c
    die(f"no {name} under {build} (build it first: cmake --build {build} --target {name})")


def torch_model(name):
    """The same model (same weights) export_torchvision.py exports."""
    return export_torchvision.build_model(name)[0]


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


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        err = (p.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise RuntimeError(f"{os.path.basename(cmd[0])} exit {p.returncode}: {err}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--repeat", type=int, default=10, help="timed inferences (default 10)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed inferences first (default 2)")
    ap.add_argument("--workdir", help="keep exports and packages here (default: a temp dir)")
    ap.add_argument("--json", help="also write the rows as JSON to this file")
    args = ap.parse_args()
    if args.repeat < 1 or args.warmup < 0:
        die("--repeat must be at least 1 and --warmup at least 0")
    compile_tool = find_tool(args.build, "npu-compile")
    submit_tool = find_tool(args.build, "npu-submit")
    workdir = args.workdir or tempfile.mkdtemp(prefix="npu-vs-pytorch.")
    os.makedirs(workdir, exist_ok=True)
    models = [m for m in args.models.split(",") if m]
    for m in models:
        if m not in export_torchvision.BEYOND and not hasattr(torchvision.models, m):
            die(f"unknown model '{m}' (neither torchvision's nor export_torchvision.BEYOND's)")

    print(f"vs_pytorch: {len(models)} models, {args.warmup} warm-up + {args.repeat} timed "
          f"inferences each, work dir {workdir}", flush=True)
    rows = []
    for m in models:
        row = {"model": m}
        rows.append(row)
        try:
            d = os.path.join(workdir, m)
            if not os.path.exists(os.path.join(d, "model.onnx")):
                subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "export_torchvision.py"),
                                workdir, "--models", m, "--runs", "1"],
                               check=True, capture_output=True, text=True)
            pkg = os.path.join(d, "model.npub")
            t0 = time.perf_counter()
            run([compile_tool, os.path.join(d, "model.onnx"), "-o", pkg])
            row["compile_s"] = time.perf_counter() - t0
            out_dir = os.path.join(d, "out")
            report = json.loads(run([submit_tool, pkg, "--input", f"input={d}/input.npy",
                                     "--output-dir", out_dir, "--repeat", str(args.repeat),
                                     "--warmup", str(args.warmup), "--json"]))
            b = report["benchmark"]
            row.update(ours_ms=b["latency_ms"]["median"], ours_min_ms=b["latency_ms"]["min"],
                       cycles=b["device_cycles"],
                       cpu_ms=(b["cpu_user_s"] + b["cpu_sys_s"]) * 1e3 / b["repeat"],
                       vcsw=b["voluntary_switches_per_inference"],
                       ivcsw=b["involuntary_switches_per_inference"],
                       faults=b["minor_faults_per_inference"])
            got = np.load(os.path.join(out_dir, "output.npy"))
            want = np.load(os.path.join(d, "expected.npy"))
            row["max_abs_diff"] = float(np.max(np.abs(got - want)))
            # PyTorch on the same input (float32, or int64 token ids for gpt_decoder: the
            # dtype export_torchvision.make_input gave it), best of 1 and 2 threads.
            model = torch_model(m)
            x = torch.from_numpy(np.load(os.path.join(d, "input.npy")))
            t1 = time_torch(model, x, 1, args.warmup, args.repeat)
            t2 = time_torch(model, x, 2, args.warmup, args.repeat)
            row["torch_ms_1t"], row["torch_ms_2t"] = t1, t2
            row["torch_ms"], row["torch_threads"] = (t1, 1) if t1 <= t2 else (t2, 2)
            row["ratio"] = row["ours_ms"] / row["torch_ms"]
        except (RuntimeError, subprocess.CalledProcessError, OSError, KeyError, ValueError) as e:
            msg = getattr(e, "stderr", None) or str(e)
            row["error"] = str(msg).strip().splitlines()[-1][:160] if str(msg).strip() else repr(e)
        status = f"{row['ratio']:.2f}x" if "ratio" in row else "FAILED: " + row["error"]
        print(f"  {m}: {status}", flush=True)

    hdr = ["model", "ours ms", "PyTorch ms", "ratio", "device cycles", "our CPU ms",
           "ctx sw/inf", "faults/inf", "max abs diff"]
    table = []
    for r in rows:
        if "ratio" not in r:
            table.append([r["model"], "-", "-", "-", "-", "-", "-", "-", "FAILED: " + r["error"]])
            continue
        table.append([r["model"], f"{r['ours_ms']:.1f}",
                      f"{r['torch_ms']:.1f} ({r['torch_threads']}t)", f"{r['ratio']:.2f}x",
                      f"{r['cycles']:,}", f"{r['cpu_ms']:.1f}",
                      f"{r['vcsw']:.0f}+{r['ivcsw']:.0f}", f"{r['faults']:.0f}",
                      f"{r['max_abs_diff']:.1e}"])
    w = [max(len(str(t[i])) for t in table + [hdr]) for i in range(len(hdr))]
    print()
    print("| " + " | ".join(h.ljust(w[i]) for i, h in enumerate(hdr)) + " |")
    print("|" + "|".join("-" * (x + 2) for x in w) + "|")
    for t in table:
        print("| " + " | ".join(str(v).ljust(w[i]) for i, v in enumerate(t)) + " |")
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"\ngeometric mean ratio over {len(ratios)} models: {geo:.2f}x "
              f"(ours = median of {args.repeat} npu-submit --repeat inferences; PyTorch = best of "
              f"1 and 2 threads, median of {args.repeat}; ctx sw = voluntary+involuntary)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0 if len(ratios) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The cost of the Python layer: npu.Session.run() next to npu-submit --repeat on the same
package and input, median latency per inference, in one run on this machine (issue 28).

For each model the package is compiled once (npu.compile) and saved; then, in alternating
rounds,
  - npu-submit PKG --input NAME=X.npy --repeat N --warmup K --json   (the C++ benchmark mode:
    wall time around Model::run, no job profiles), and
  - Session(PKG, profile=False).run({NAME: x}) timed with time.perf_counter around each call
    (K warm-up, N timed; the same work plus the Python side: argument conversion, the GIL,
    wrapping the outputs), and the same with profile=True (the default: job profiles read
    back for last_stats)
and the table shows each round's medians, the ratio Session.run / npu-submit, and "binding
us": the median over the calls of (the call's time - the runtime's own wall time for it,
RunStats.host_ms), what the Python layer adds, measured inside one process and so robust to
the machine's load. The machine may be shared: `uptime`'s load is printed before and after,
and the rounds show the spread.

Usage: PYTHONPATH=build/python bench/python_overhead.py [--build build] [--rounds 3]
           [--models fashion_mnist,resnet18] [--repeat 200] [--warmup 10]
resnet18 (and any name of scripts/export_torchvision.py) needs python3-torch/torchvision;
it is skipped with a note when they are missing. Its repeat count is --repeat / 10 (at
least 10).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import npu

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_average():
    return os.getloadavg()[0]


def fashion_mnist(work):
    fm = ROOT / "models" / "fashion_mnist"
    return fm / "fashion_mnist.onnx", "image", np.load(fm / "samples" / "image_0.npy")


def torchvision_model(name, work):
    sys.path.insert(0, str(ROOT / "scripts"))
    import export_torchvision  # noqa: E402 -- needs torch
    import torch
    model, shape, opset, n_bn = export_torchvision.build_model(name)
    path = work / f"{name}.onnx"
    export_torchvision.export_onnx(model, torch.zeros(shape), path, opset, keep_bn=n_bn > 0)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return path, "input", x


def submit_median(submit, pkg, name, x_path, repeat, warmup):
    r = subprocess.run([str(submit), str(pkg), "--input", f"{name}={x_path}", "--repeat",
                        str(repeat), "--warmup", str(warmup), "--json"],
                       capture_output=True, text=True, env={**os.environ, "NPU_LOG_LEVEL": "off"})
    if r.returncode != 0:
        sys.exit(f"npu-submit failed: {r.stderr.strip()}")
    return json.loads(r.stdout)["benchmark"]["latency_ms"]["median"]


def session_median(pkg, name, x, repeat, warmup, profile):
    """Median ms per Session.run(), and the median of (that call's time - the runtime's own
    wall time for it, RunStats.host_ms) in us: what the Python layer adds, in one process."""
    with npu.Session(pkg, profile=profile, max_parallel=1) as s:
        for _ in range(warmup):
            s.run({name: x})
        times, extra = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            s.run({name: x})
            t = (time.perf_counter() - t0) * 1e3
            times.append(t)
            extra.append((t - s.last_stats.host_ms) * 1e3)
    return statistics.median(times), statistics.median(extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--models", default="fashion_mnist,resnet18")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args()
    submit = pathlib.Path(args.build) / "tools" / "npu-submit" / "npu-submit"
    if not submit.exists():
        sys.exit(f"{submit} not found: build first (make build)")

    print(f"load average before: {load_average():.2f} ({os.cpu_count()} CPUs)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        for model in args.models.split(","):
            try:
                onnx, name, x = (fashion_mnist(work) if model == "fashion_mnist"
                                 else torchvision_model(model, work))
            except ImportError as e:
                print(f"{model}: skipped ({e})")
                continue
            repeat = args.repeat if model == "fashion_mnist" else max(10, args.repeat // 10)
            warmup = args.warmup if model == "fashion_mnist" else max(2, args.warmup // 5)
            pkg = work / f"{model}.npub"
            npu.compile(onnx).save(pkg)
            x_path = work / f"{model}_x.npy"
            np.save(x_path, x)
            for k in range(args.rounds):
                cli = submit_median(submit, pkg, name, x_path, repeat, warmup)
                py, extra = session_median(pkg, name, x, repeat, warmup, profile=False)
                prof, _ = session_median(pkg, name, x, repeat, warmup, profile=True)
                rows.append((model, k + 1, repeat, cli, py, prof, extra))
    print(f"load average after:  {load_average():.2f}\n")
    print(f"{'model':<14} {'round':>5} {'N':>5} {'npu-submit ms':>13} {'Session.run ms':>14} "
          f"{'ratio':>6} {'+profile ms':>11} {'ratio':>6} {'binding us':>10}")
    for model, k, n, cli, py, prof, extra in rows:
        print(f"{model:<14} {k:>5} {n:>5} {cli:>13.3f} {py:>14.3f} {py / cli:>6.3f} "
              f"{prof:>11.3f} {prof / cli:>6.3f} {extra:>10.1f}")
    for model in dict.fromkeys(r[0] for r in rows):
        ratios = [r[4] / r[3] for r in rows if r[0] == model]
        print(f"{model}: Session.run / npu-submit median over rounds "
              f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Float vs int8 accuracy of the Fashion-MNIST classifier through the device.

  scripts/eval_fashion_mnist.py BUILD_DIR [--limit N] [--data DIR] [--work DIR] [--json]

Writes the test set (/usr/share/datasets/fashion-mnist/t10k-*, pixels scaled to [0,1]) as one
.npy batch [N,1,28,28], compiles models/fashion_mnist/fashion_mnist.onnx twice with
BUILD_DIR/tools/npu-compile/npu-compile — float, and `--quantize int8 --calibration
models/fashion_mnist/calibration.npy` — runs both packages on the emulator with
BUILD_DIR/tools/npu-submit/npu-submit, and prints the top-1 accuracy of each, the difference
(BRIEF §4: int8 within 1 point of float) and the modeled device cycles (whole test set and
per image). Exit status: 0 done and int8 within 1 point, 1 int8 more than 1 point below
float, 2 usage, file or tool error. Needs only numpy.
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODEL_DIR = os.path.join(ROOT, "models", "fashion_mnist")


def fail(msg):
    print(f"eval_fashion_mnist.py: {msg}", file=sys.stderr)
    sys.exit(2)


def read_idx(path, magic_expected, header):
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail(f"{path}: {e}")
    fields = np.frombuffer(data[:header], dtype=">u4")
    if fields[0] != magic_expected:
        fail(f"{path}: bad IDX magic {fields[0]}")
    return fields, data[header:]


def load_test_set(data_dir):
    (_, n, rows, cols), pixels = read_idx(
        os.path.join(data_dir, "t10k-images-idx3-ubyte.gz"), 2051, 16)
    images = np.frombuffer(pixels, dtype=np.uint8).reshape(int(n), 1, int(rows), int(cols))
    (_, m), raw = read_idx(os.path.join(data_dir, "t10k-labels-idx1-ubyte.gz"), 2049, 8)
    labels = np.frombuffer(raw, dtype=np.uint8).astype(np.int64)[: int(m)]
    return images.astype(np.float32) / 255.0, labels


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def evaluate(build, work, name, extra_flags, test_npy, labels):
    compile_tool = os.path.join(build, "tools", "npu-compile", "npu-compile")
    submit_tool = os.path.join(build, "tools", "npu-submit", "npu-submit")
    pkg = os.path.join(work, f"{name}.npub")
    out_dir = os.path.join(work, name)
    t0 = time.time()
    compiled = run([compile_tool, os.path.join(MODEL_DIR, "fashion_mnist.onnx"), "-o", pkg]
                   + extra_flags)
    t1 = time.time()
    report = json.loads(run([submit_tool, pkg, "--input", f"image={test_npy}",
                             "--output-dir", out_dir, "--json"]))
    t2 = time.time()
    logits = np.load(os.path.join(out_dir, "logits.npy"))
    if logits.shape != (len(labels), 10):
        fail(f"{name}: logits shape {logits.shape}, expected {(len(labels), 10)}")
    top1 = logits.argmax(axis=1)
    return {
        "package": pkg,
        "compile": compiled.strip().splitlines()[-1] if compiled.strip() else "",
        "accuracy": float((top1 == labels).mean() * 100.0),
        "cycles": int(report["cycles"]),
        "cycles_per_image": report["cycles"] / len(labels),
        "compile_s": t1 - t0,
        "run_s": t2 - t1,
        "top1": top1,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", help="the CMake build directory (holds tools/npu-compile, ...)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N test images")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--work", default="", help="directory for the .npy batch and packages "
                    "(default: a temporary directory)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    images, labels = load_test_set(args.data)
    if args.limit > 0:
        images, labels = images[: args.limit], labels[: args.limit]
    work = args.work or tempfile.mkdtemp(prefix="eval_fashion_mnist_")
    os.makedirs(work, exist_ok=True)
    test_npy = os.path.join(work, "test_images.npy")
    np.save(test_npy, np.ascontiguousarray(images))

    fp = evaluate(args.build, work, "float", [], test_npy, labels)
    q8 = evaluate(args.build, work, "int8",
                  ["--quantize", "int8", "--calibration",
                   os.path.join(MODEL_DIR, "calibration.npy")], test_npy, labels)
    diff = q8["accuracy"] - fp["accuracy"]
    agree = float((fp["top1"] == q8["top1"]).mean() * 100.0)
    result = {
        "images": int(len(labels)),
        "float_accuracy": fp["accuracy"],
        "int8_accuracy": q8["accuracy"],
        "difference_points": diff,
        "top1_agreement": agree,
        "float_cycles": fp["cycles"],
        "int8_cycles": q8["cycles"],
        "float_cycles_per_image": fp["cycles_per_image"],
        "int8_cycles_per_image": q8["cycles_per_image"],
        "work": work,
    }
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"test images:     {len(labels)}")
        print(f"float accuracy:  {fp['accuracy']:.2f}%   ({fp['compile']})")
        print(f"int8 accuracy:   {q8['accuracy']:.2f}%   ({q8['compile']})")
        print(f"difference:      {diff:+.2f} points (int8 - float); top-1 agreement "
              f"{agree:.2f}%")
        print(f"device cycles:   float {fp['cycles']} ({fp['cycles_per_image']:.0f}/image), "
              f"int8 {q8['cycles']} ({q8['cycles_per_image']:.0f}/image), "
              f"ratio {fp['cycles'] / max(q8['cycles'], 1):.2f}x")
        print(f"wall time:       float compile {fp['compile_s']:.1f} s + run "
              f"{fp['run_s']:.1f} s, int8 compile {q8['compile_s']:.1f} s + run "
              f"{q8['run_s']:.1f} s")
    return 0 if diff >= -1.0 else 1


if __name__ == "__main__":
    sys.exit(main())

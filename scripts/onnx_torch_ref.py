#!/usr/bin/python3
"""A small independent ONNX evaluator (PyTorch functional ops) with npu-run's I/O flags.

  scripts/onnx_torch_ref.py MODEL.onnx --input NAME=FILE.npy [--input ...] --output-dir DIR

writes DIR/<output name>.npy per graph output (name sanitized like npu-submit). It checks that an
exported .onnx file computes what PyTorch's module computed (there is no onnxruntime on Debian)
and stands in for npu-run in tests/realmodels/run.sh (RUNNER=...) to test the harness itself.
Supports the operators the real-model exports use: Conv, Gemm, MatMul, Relu, Clip, MaxPool,
AveragePool, GlobalAveragePool, Add, Mul, BatchNormalization, Flatten, Reshape, Softmax, Concat,
Constant, Identity, Dropout.
"""
import argparse
import os
import re
import sys
import time

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn.functional as F


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def pads_2d(a, x, kernel, strides, dilations):
    pads = a.get("pads", [0] * 4)
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        pads = [0] * 4
        for i in range(2):
            size = x.shape[2 + i]
            out = -(-size // strides[i])
            total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size)
            lo = total // 2 if auto == "SAME_UPPER" else total - total // 2
            pads[i], pads[i + 2] = lo, total - lo
    elif auto == "VALID":
        pads = [0] * 4
    return pads  # [top, left, bottom, right]


def pool(x, a, kind):
    k = a["kernel_shape"]
    s = a.get("strides", [1, 1])
    p = pads_2d(a, x, k, s, [1, 1])
    ceil = bool(a.get("ceil_mode", 0))
    if kind == "max":
        x = F.pad(x, (p[1], p[3], p[0], p[2]), value=float("-inf"))
        return F.max_pool2d(x, k, s, ceil_mode=ceil)
    include_pad = bool(a.get("count_include_pad", 0))
    if p[0] == p[2] and p[1] == p[3]:
        return F.avg_pool2d(x, k, s, padding=(p[0], p[1]), ceil_mode=ceil,
                            count_include_pad=include_pad)
    xs = F.pad(x, (p[1], p[3], p[0], p[2]))
    if include_pad:
        return F.avg_pool2d(xs, k, s, ceil_mode=ceil)
    ones = F.pad(torch.ones_like(x[:1, :1]), (p[1], p[3], p[0], p[2]))
    return F.avg_pool2d(xs, k, s, ceil_mode=ceil) / F.avg_pool2d(ones, k, s, ceil_mode=ceil)


def run_node(n, v):
    a = attrs(n)
    i = [v[name] if name else None for name in n.input]
    op = n.op_type
    if op == "Conv":
        k = list(i[1].shape[2:])
        s = a.get("strides", [1, 1])
        d = a.get("dilations", [1, 1])
        p = pads_2d(a, i[0], k, s, d)
        x = F.pad(i[0], (p[1], p[3], p[0], p[2]))
        b = i[2] if len(i) > 2 else None
        return [F.conv2d(x, i[1], b, s, 0, d, a.get("group", 1))]
    if op == "Gemm":
        A = i[0].t() if a.get("transA", 0) else i[0]
        B = i[1].t() if a.get("transB", 0) else i[1]
        y = a.get("alpha", 1.0) * (A @ B)
        if len(i) > 2 and i[2] is not None:
            y = y + a.get("beta", 1.0) * i[2]
        return [y]
    if op == "MatMul":
        return [torch.matmul(i[0], i[1])]
    if op == "Relu":
        return [F.relu(i[0])]
    if op == "Clip":
        lo = i[1] if len(i) > 1 and i[1] is not None else a.get("min")
        hi = i[2] if len(i) > 2 and i[2] is not None else a.get("max")
        lo = float(lo) if lo is not None else None
        hi = float(hi) if hi is not None else None
        return [torch.clamp(i[0], lo, hi)]
    if op == "MaxPool":
        return [pool(i[0], a, "max")]
    if op == "AveragePool":
        return [pool(i[0], a, "avg")]
    if op == "GlobalAveragePool":
        return [i[0].mean(dim=(2, 3), keepdim=True)]
    if op == "Add":
        return [i[0] + i[1]]
    if op == "Mul":
        return [i[0] * i[1]]
    if op == "BatchNormalization":
        return [F.batch_norm(i[0], i[3], i[4], i[1], i[2], False, 0.0, a.get("epsilon", 1e-5))]
    if op == "Flatten":
        ax = a.get("axis", 1)
        return [i[0].reshape(int(np.prod(i[0].shape[:ax])), -1)]
    if op == "Reshape":
        shape = [int(s) for s in i[1].tolist()]
        if not a.get("allowzero", 0):
            shape = [i[0].shape[k] if s == 0 else s for k, s in enumerate(shape)]
        return [i[0].reshape(shape)]
    if op == "Softmax":
        return [F.softmax(i[0], dim=a.get("axis", -1))]
    if op == "Concat":
        return [torch.cat(i, dim=a["axis"])]
    if op == "Constant":
        return [torch.from_numpy(onnx.numpy_helper.to_array(a["value"]).copy())]
    if op in ("Identity", "Dropout"):
        return [i[0]] + ([torch.ones_like(i[0], dtype=torch.bool)] if len(n.output) > 1 else [])
    raise NotImplementedError(f"operator {op} (node '{n.name}')")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    ap.add_argument("--output-dir", required=True)
    ap.add_argument("--stats", action="store_true", help="print the wall time")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    try:
        m = onnx.load(args.model)
    except Exception as e:
        sys.exit(f"onnx_torch_ref.py: {args.model}: {e}")
    g = m.graph
    v = {t.name: torch.from_numpy(onnx.numpy_helper.to_array(t).copy()) for t in g.initializer}
    for spec in args.input:
        name, _, path = spec.partition("=")
        v[name] = torch.from_numpy(np.load(path))
    missing = [x.name for x in g.input if x.name not in v]
    if missing:
        sys.exit(f"onnx_torch_ref.py: {args.model}: missing input(s) {', '.join(missing)}")
    t0 = time.perf_counter()
    with torch.no_grad():
        for n in g.node:
            try:
                outs = run_node(n, v)
            except NotImplementedError as e:
                sys.exit(f"onnx_torch_ref.py: {args.model}: unsupported {e}")
            for name, t in zip(n.output, outs):
                if name:
                    v[name] = t
    ms = (time.perf_counter() - t0) * 1e3
    os.makedirs(args.output_dir, exist_ok=True)
    if args.stats:
        print(f"ref ok: host {ms:.3f} ms")
    for o in g.output:
        fn = re.sub(r"[^A-Za-z0-9_.-]", "_", o.name) + ".npy"
        arr = np.ascontiguousarray(v[o.name].numpy())
        np.save(os.path.join(args.output_dir, fn), arr)
        print(f"wrote {os.path.join(args.output_dir, fn)} ({arr.dtype} {list(arr.shape)})")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A torchvision model exported to ONNX, compiled at fp32, int8 and fp16, run on the emulated
NPU and compared with PyTorch: agreement, error and modeled cycles per precision, and the
roofline of each run.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/torchvision_precisions.py \\
        [--model resnet18] [--images 16] [--out DIR]

Needs Debian's python3-torch and python3-torchvision (make deps-realmodels), and matplotlib for
the pictures. The model has torchvision's architecture with fixed random weights and
non-trivial BatchNorm statistics (scripts/export_torchvision.py: no weights are downloaded), so
"accuracy" is measured against PyTorch's own float32 output on random images: top-1 agreement
and the largest error relative to the output's scale. int8 is calibrated on other random
images.

Writes DIR/<model>.onnx and DIR/<model>_{fp32,int8,fp16}.png (default DIR: ./torchvision_out).
"""
import argparse
import pathlib
import sys
import time

import numpy as np
import torch

import npu

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from export_torchvision import build_model, export_onnx  # noqa: E402 -- the realmodels' models


def export(name, path):
    model, shape, opset, n_bn = build_model(name)
    export_onnx(model, torch.zeros(shape), path, opset, keep_bn=n_bn > 0)
    return model, shape


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--images", type=int, default=16, help="test images (default %(default)s)")
    ap.add_argument("--out", default="torchvision_out")
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    onnx_path = out / f"{args.model}.onnx"
    model, shape = export(args.model, onnx_path)
    g = torch.Generator().manual_seed(7)
    images = torch.empty((args.images,) + tuple(shape[1:])).normal_(0, 1, generator=g)
    calibration = torch.empty((16,) + tuple(shape[1:])).normal_(0, 1, generator=g).numpy()
    with torch.no_grad():
        expected = model(images).numpy()
    images = images.numpy()
    scale = np.abs(expected).max()

    variants = {
        "fp32": dict(),
        "int8": dict(quantize="int8", calibration=calibration),
        "fp16": dict(precision="fp16"),
    }
    print(f"{args.model}: {args.images} random images, PyTorch float32 as the reference\n")
    print(f"{'':6} {'top-1 agree':>11} {'max err/scale':>13} {'cycles/image':>13} "
          f"{'vs fp32':>8} {'host ms/image':>13} {'compile s':>9}")
    fp32_cycles = None
    for name, options in variants.items():
        t0 = time.perf_counter()
        package = npu.compile(onnx_path, **options)
        compile_s = time.perf_counter() - t0
        with npu.Session(package) as session:
            got, cycles, host_ms = [], 0, 0.0
            for k in range(args.images):
                got.append(session.run({"input": images[k:k + 1]})["output"][0])
                cycles += session.last_stats.cycles
                host_ms += session.last_stats.host_ms
            got = np.stack(got)
            agree = (got.argmax(1) == expected.argmax(1)).mean()
            err = np.abs(got - expected).max() / scale
            per_image = cycles // args.images
            fp32_cycles = fp32_cycles or per_image
            print(f"{name:6} {agree:>10.0%} {err:>13.2e} {per_image:>13,} "
                  f"{fp32_cycles / per_image:>7.2f}x {host_ms / args.images:>13.2f} "
                  f"{compile_s:>9.2f}")
            try:
                npu.plot.summary(session, out / f"{args.model}_{name}.png",
                                 title=f"{args.model} at {name} on the emulated NPU "
                                       "(last image)")
            except npu.Error as e:
                print(f"       no picture: {e}")
    print(f"\nwrote {out}/{args.model}_{{fp32,int8,fp16}}.png")


if __name__ == "__main__":
    main()

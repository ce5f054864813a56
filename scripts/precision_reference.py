#!/usr/bin/env python3
"""PyTorch's own error at half precision, as a yardstick for the device's fp16/bf16 runs.

Rebuilds the model exactly as scripts/export_torchvision.py exports it (same seeds), then runs
it three ways on the exported input and prints each one's error against the float32 output:
  bf16:      the model and input in torch.bfloat16 (PyTorch's CPU bf16 kernels)
  fp16-emu:  float32 arithmetic with the weights, the input and every leaf module's output
             rounded to float16 (what storing tensors in fp16 between layers costs; PyTorch
             1.13 has no fp16 convolution on the CPU)
and, with --got FILE.npy, the device's output the same way.

Usage: scripts/precision_reference.py MODEL_DIR MODEL_NAME [--got OUT.npy ...]
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_torchvision as ex  # noqa: E402


def build(name):
    import torchvision
    torch.manual_seed(0)
    if name in ex.BEYOND:
        model = ex.BEYOND[name][0]()
        shape = ex.BEYOND[name][1]
    else:
        model, shape = getattr(torchvision.models, name)(weights=None), (1, 3, 224, 224)
    model.eval()
    ex.randomize_zero_biases(model, seed=3)
    ex.randomize_norm_affine(model, seed=4)
    ex.randomize_bn(model, seed=1, shape=shape)
    model.eval()
    return model


def errors(got, want):
    got, want = got.astype(np.float64), want.astype(np.float64)
    d = np.abs(got - want)
    scale = np.abs(want).max()
    rms = np.sqrt((d ** 2).mean()) / np.sqrt((want ** 2).mean())
    top1 = (got.argmax(-1) == want.argmax(-1)).mean()
    return f"max |diff| {d.max():.3e} ({d.max() / scale:.2%} of max |y|), rms {rms:.2%}, top-1 {top1:.0%}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir")
    ap.add_argument("name")
    ap.add_argument("--got", nargs="*", default=[], help="device outputs (.npy) to compare too")
    args = ap.parse_args()
    x = torch.from_numpy(np.load(os.path.join(args.model_dir, "input.npy")).astype(np.float32))
    want = np.load(os.path.join(args.model_dir, "expected.npy"))
    model = build(args.name)
    with torch.no_grad():
        ref = model(x).numpy()
        print(f"rebuilt fp32 vs expected.npy: {errors(ref, want)}")
        bf = model.to(torch.bfloat16)(x.to(torch.bfloat16)).float().numpy()
        print(f"PyTorch bf16:     {errors(bf, want)}")
        model = build(args.name)
        r16 = lambda t: t.half().float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t
        for p in model.parameters():
            p.copy_(r16(p))
        for m in model.modules():
            if len(list(m.children())) == 0:
                m.register_forward_hook(lambda mod, inp, out: r16(out))
        h = model(r16(x)).numpy()
        print(f"PyTorch fp16-emu: {errors(h, want)}")
    for path in args.got:
        print(f"{path}: {errors(np.load(path), want)}")


if __name__ == "__main__":
    main()

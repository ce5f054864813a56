#!/usr/bin/python3
"""Compare a model output against the expected one.

  scripts/compare_outputs.py GOT.npy EXPECTED.npy [--rtol 1e-3] [--atol 1e-4] [--scale-atol F]
                             [--require-top1] [--json]

Prints the max abs diff, the max rel diff (|got-exp| / |exp| over elements with exp != 0), the
number of elements outside tolerance and the top-1 agreement (argmax over the last axis, per
row). Passes when every element satisfies |got - exp| <= atol + rtol * |exp| (numpy.allclose's
rule, the one ONNX's backend tests use) and has the same shape; top-1 disagreement alone is
reported but does not fail (near-ties can flip within tolerance) unless --require-top1.
Exit status: 0 match, 1 mismatch, 2 usage or file error.
"""
import argparse
import json
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("got")
    ap.add_argument("expected")
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--scale-atol", type=float, default=0.0,
                    help="add this fraction of max |expected| to atol (half-precision runs: "
                         "their error scales with the output, not with each element)")
    ap.add_argument("--require-top1", action="store_true",
                    help="also fail when the argmax differs in any row")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()

    try:
        got = np.load(args.got)
        exp = np.load(args.expected)
    except Exception as e:
        print(f"compare_outputs.py: {e}", file=sys.stderr)
        return 2

    res = {"got": args.got, "expected": args.expected, "rtol": args.rtol, "atol": args.atol,
           "shape_got": list(got.shape), "shape_expected": list(exp.shape)}
    if got.shape != exp.shape:
        if got.size == exp.size:
            res["note"] = "shapes differ, same size: compared flattened"
            got = got.reshape(exp.shape)
        else:
            res["ok"] = False
            res["error"] = f"shape {list(got.shape)} != expected {list(exp.shape)}"
            print(json.dumps(res) if args.json else f"MISMATCH: {res['error']}",
                  file=sys.stderr if not args.json else sys.stdout)
            return 1
    g = got.astype(np.float64)
    e = exp.astype(np.float64)
    nonfinite = int((~np.isfinite(g)).sum())
    diff = np.abs(g - e)
    nz = e != 0
    max_abs = float(diff.max()) if diff.size else 0.0
    max_rel = float((diff[nz] / np.abs(e[nz])).max()) if nz.any() else 0.0
    atol = args.atol + args.scale_atol * (float(np.abs(e).max()) if e.size else 0.0)
    res["atol_used"] = atol
    bad = ~(diff <= atol + args.rtol * np.abs(e))
    n_bad = int(bad.sum())
    if g.ndim >= 1 and g.size:
        g2 = g.reshape(-1, g.shape[-1])
        e2 = e.reshape(-1, e.shape[-1])
        top1 = g2.argmax(axis=1) == e2.argmax(axis=1)
        top1_ok, top1_n = int(top1.sum()), int(top1.size)
    else:
        top1_ok = top1_n = 0
    ok = n_bad == 0 and nonfinite == 0 and (not args.require_top1 or top1_ok == top1_n)
    res.update({"ok": ok, "max_abs_diff": max_abs, "max_rel_diff": max_rel,
                "out_of_tolerance": n_bad, "elements": int(g.size), "nonfinite": nonfinite,
                "top1_match": top1_ok, "top1_rows": top1_n,
                "max_abs_expected": float(np.abs(e).max()) if e.size else 0.0})
    if args.json:
        print(json.dumps(res))
    else:
        print(f"max abs diff {max_abs:.3e}, max rel diff {max_rel:.3e} "
              f"(|expected| max {res['max_abs_expected']:.3g})")
        print(f"out of tolerance (atol {atol:g} + rtol {args.rtol:g}*|exp|): "
              f"{n_bad}/{g.size}" + (f", non-finite: {nonfinite}" if nonfinite else ""))
        print(f"top-1 match: {top1_ok}/{top1_n}")
        if n_bad:
            idx = np.unravel_index(np.argmax(np.where(bad, diff, -1)), g.shape)
            print(f"worst at {list(map(int, idx))}: got {g[idx]:.7g}, expected {e[idx]:.7g}")
        print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

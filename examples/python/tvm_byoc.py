#!/usr/bin/python3
"""A TVM BYOC JSON graph (the format relax.ext.example_npu emits, docs/tvm.md) with its
constants given as `params`, compiled and run from Python, checked against NumPy.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/tvm_byoc.py

The graph is a convolution (example_npu.conv2d), a bias add (example_npu.add), a ReLU and a 2x2
max pool: the input `x` is a run-time input, the convolution's weight `w` and the bias `b` are
`const` nodes, whose values TVM hands the runtime in Init(consts) and we take from
params={name: ndarray}. The compiler fuses the four kernels into one conv+bias+relu and a pool.
"""
import json

import numpy as np

import npu


def graph():
    def node(op, name, shape, inputs=None, **attrs):
        n = {"op": op, "name": name, "attrs": {"shape": [shape], "dtype": ["float32"], **attrs}}
        if inputs is not None:
            n["inputs"] = inputs
        return n
    nodes = [
        node("input", "x", [1, 3, 16, 16]),
        node("const", "w", [8, 3, 3, 3]),
        node("const", "b", [1, 8, 1, 1]),
        node("kernel", "example_npu.conv2d", [1, 8, 16, 16], [[0, 0, 0], [1, 0, 0]],
             num_inputs=2, num_outputs=1, strides=[1, 1], padding=[1, 1, 1, 1],
             dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW"),
        node("kernel", "example_npu.add", [1, 8, 16, 16], [[3, 0, 0], [2, 0, 0]],
             num_inputs=2, num_outputs=1),
        node("kernel", "example_npu.relu", [1, 8, 16, 16], [[4, 0, 0]], num_inputs=1,
             num_outputs=1),
        node("kernel", "example_npu.max_pool2d", [1, 8, 8, 8], [[5, 0, 0]], num_inputs=1,
             num_outputs=1, pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 0, 0],
             layout="NCHW"),
    ]
    return json.dumps({"nodes": nodes, "arg_nodes": [0, 1, 2], "heads": [[6, 0, 0]],
                       "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7]})


def reference(x, w, b):
    """conv2d (pad 1) + bias + relu, then 2x2 max pool, in NumPy."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((1, 8, 16, 16), np.float32)
    for i in range(3):
        for j in range(3):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + 16, j:j + 16], w[:, :, i, j])
    y = np.maximum(y + b, 0)
    return y.reshape(1, 8, 8, 2, 8, 2).max(axis=(3, 5))


def main():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    b = rng.standard_normal((1, 8, 1, 1)).astype(np.float32) * 0.1
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)

    package = npu.compile(graph().encode(), params={"w": w, "b": b})
    print(package.partition)
    print(package.report_text())
    with npu.Session(package) as session:
        print("inputs:", session.inputs, "outputs:", session.outputs)
        y = session.run({"x": x})["output_0"]
        err = np.abs(y - reference(x, w, b)).max()
        print(f"output_0 {y.shape}: max |npu - numpy| = {err:.2e}, "
              f"{session.last_stats.cycles} cycles")
        for layer in session.last_stats.layers:
            print(f"  {layer['layer']:<36} {layer['op']:<10} estimated "
                  f"{layer['estimated_cycles']:>6}  measured {layer['measured_cycles']:>6}")
    assert err < 1e-4, err


if __name__ == "__main__":
    main()

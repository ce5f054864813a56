"""Fixtures of the npu module's pytest suite (docs/python.md): where the repository and the
build are, the Fashion-MNIST model compiled once per test session, its sample images, an
npu-daemon on a temporary socket, and small TVM BYOC JSON graphs built in the test.

ctest runs each test file as `python3 -m pytest FILE` with PYTHONPATH=<build>/python and
NPU_BUILD_DIR=<build> (tests/python/CMakeLists.txt)."""

import json
import os
import pathlib
import subprocess
import time

import numpy as np
import pytest

import npu

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("NPU_BUILD_DIR", ROOT / "build"))
FM = ROOT / "models" / "fashion_mnist"
EXAMPLES = ROOT / "examples"

needs_compiler = pytest.mark.skipif(
    not npu.HAS_COMPILER, reason="this build has no compiler (-DNPU_BUILD_COMPILER=OFF)")


def tool(name):
    """The path of a tool of the build, or skips the test when it was not built."""
    path = BUILD / "tools" / name / name
    if not path.exists():
        pytest.skip(f"{path} not built")
    return path


@pytest.fixture(scope="session")
def fm_package():
    if not npu.HAS_COMPILER:
        pytest.skip("this build has no compiler (-DNPU_BUILD_COMPILER=OFF)")
    return npu.compile(FM / "fashion_mnist.onnx")


@pytest.fixture(scope="session")
def fm_batch():
    return np.load(FM / "samples" / "batch8.npy")


@pytest.fixture(scope="session")
def fm_expected():
    """PyTorch's logits for batch8.npy."""
    return np.load(FM / "samples" / "expected_logits.npy")


@pytest.fixture(scope="session")
def fm_labels():
    rows = [line.split() for line in (FM / "samples" / "labels.txt").read_text().splitlines()
            if line and not line.startswith("#")]
    return np.array([int(r[1]) for r in rows])


@pytest.fixture
def daemon(tmp_path):
    """An npu-daemon serving one emulated device on a socket in tmp_path; yields the socket."""
    binary = tool("npu-daemon")
    sock = tmp_path / "npu.sock"
    proc = subprocess.Popen([str(binary), "--socket", str(sock)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while not sock.exists():
            if proc.poll() is not None:
                pytest.fail("npu-daemon exited: " + proc.stderr.read().decode())
            if time.monotonic() > deadline:
                pytest.fail("npu-daemon did not create its socket in 10 s")
            time.sleep(0.01)
        yield sock
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def matmul_relu_graph(m=2, k=4, n=8, weights_const=True, legacy=False):
    """A TVM BYOC JSON graph computing relu(x @ w): x is an input [m, k]; w [k, n] is a
    `const` node (its value comes from params) or a second input."""
    def attrs(shape, extra=None):
        a = {"shape": [[shape]] if legacy else [shape],
             "dtype": [["float32"]] if legacy else ["float32"]}
        if extra:
            a.update(extra)
        return a
    kernel_attrs = {"num_inputs": "2" if legacy else 2, "num_outputs": "1" if legacy else 1}
    nodes = [
        {"op": "input", "name": "x", "attrs": attrs([m, k])},
        {"op": "const" if weights_const else "input", "name": "w", "attrs": attrs([k, n])},
        {"op": "kernel", "name": "example_npu.matmul_relu_fused", "inputs": [[0, 0, 0], [1, 0, 0]],
         "attrs": attrs([m, n], kernel_attrs)},
    ]
    return json.dumps({"nodes": nodes, "arg_nodes": [0, 1], "heads": [[2, 0, 0]],
                       "node_row_ptr": [0, 1, 2, 3]})


def run_tool(*args, check=True):
    """Runs a command; returns the CompletedProcess (text)."""
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if check and r.returncode != 0:
        pytest.fail(f"{args[0]} failed ({r.returncode}): {r.stderr}")
    return r

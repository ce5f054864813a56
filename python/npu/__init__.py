"""The NPU stack from Python: compile models, run them on the emulated NPU (or a daemon's, or a
device node), submit raw command buffers, assemble and disassemble, with NumPy arrays in and
out (docs/python.md).

    import numpy as np, npu
    pkg = npu.compile("models/fashion_mnist/fashion_mnist.onnx")
    with npu.Session(pkg) as s:
        logits = s.run({"image": np.zeros((1, 1, 28, 28), np.float32)})["logits"]
        print(s.last_stats.cycles, s.last_stats.engines)

A thin layer over the C++ libraries (the compiler, the model runtime, libnpu, the assembler):
the same packages, results and cycles as the tools, and errors raise npu.Error with the
tools' one-line messages. npu.plot draws rooflines and estimated-vs-measured cycles (needs
matplotlib, imported only when plotting).
"""

from ._npu import (
    Device,
    Error,
    Package,
    RunStats,
    Session,
    SubmitResult,
    TensorSpec,
    assemble,
    device_config,
    disassemble,
    load,
)

Error.errno = None  # set on errors raised by the libraries

try:
    from ._npu import compile  # noqa: A004 -- npu.compile, as the contract names it
    HAS_COMPILER = True
except ImportError:  # built with -DNPU_BUILD_COMPILER=OFF
    HAS_COMPILER = False

    def compile(model, *, precision="fp32", quantize=None, calibration=None, params=None,  # noqa: A001
                input_shapes=None, device_config=None, dims=None, host_only=False):
        """Compiles a model into an npu.Package -- not in this build, which was configured
        with -DNPU_BUILD_COMPILER=OFF: it raises npu.Error. Load packages compiled elsewhere
        with npu.load()."""
        raise Error("npu.compile: this build has no compiler (configured with "
                    "-DNPU_BUILD_COMPILER=OFF); load a compiled package with npu.load()")

from . import plot  # noqa: E402 -- matplotlib is imported only when a plot is drawn

__version__ = "0.1.0"
__all__ = [
    "Device", "Error", "HAS_COMPILER", "Package", "RunStats", "Session", "SubmitResult",
    "TensorSpec", "assemble", "compile", "device_config", "disassemble", "load", "plot",
]

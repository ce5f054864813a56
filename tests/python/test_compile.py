"""npu.compile(), npu.Package and npu.load(): the same packages and errors as npu-compile."""

import numpy as np
import pytest

import npu
from conftest import FM, matmul_relu_graph, needs_compiler, run_tool, tool

pytestmark = needs_compiler


def test_compile_matches_npu_compile_byte_for_byte(fm_package, tmp_path):
    out = tmp_path / "cli.npub"
    r = run_tool(tool("npu-compile"), FM / "fashion_mnist.onnx", "-o", out, "--report")
    cli = npu.load(out)
    # The producer string differs (npu-compile vs npu (python)); everything else is the same.
    a, b = cli.metadata, fm_package.metadata
    a["model"].pop("producer")
    b["model"].pop("producer")
    assert a == b
    assert fm_package.device_ops == int(r.stdout.split("(")[-1].split(" ops on the NPU")[0])
    assert fm_package.report_text() in r.stdout


def test_package_properties(fm_package):
    assert [t.name for t in fm_package.inputs] == ["image"]
    spec = fm_package.inputs[0]
    assert spec.shape == ("N", 1, 28, 28)
    assert spec.dtype == np.dtype(np.float32)
    assert fm_package.outputs[0].name == "logits"
    assert fm_package.outputs[0].shape == ("N", 10)
    assert "ops on the NPU" in fm_package.partition
    assert fm_package.device_ops > 0 and fm_package.host_ops == 0
    assert fm_package.name.endswith("fashion_mnist.onnx")


def test_report_rows(fm_package):
    rows = fm_package.report()
    assert rows, "no layers"
    for r in rows:
        for key in ("layer", "op", "engine", "estimated_cycles", "tiles", "macs", "bytes"):
            assert key in r
    convs = [r for r in rows if r["op"] == "conv2d"]
    assert len(convs) == 2
    # conv1: 16 output channels x 28x28 x (1 x 3x3) MACs.
    assert convs[0]["macs"] == 16 * 28 * 28 * 9
    assert convs[0]["engine"] == "matrix"
    metadata = fm_package.metadata
    total = sum(s.get("estimated_cycles", 0) for s in metadata["segments"])
    assert fm_package.estimated_cycles == total
    assert sum(r["estimated_cycles"] for r in rows) <= total


def test_save_load_roundtrip(fm_package, tmp_path):
    path = tmp_path / "fm.npub"
    fm_package.save(path)
    assert path.read_bytes() == fm_package.to_bytes()
    again = npu.load(path)
    assert again.to_bytes() == fm_package.to_bytes()
    assert npu.load(fm_package.to_bytes()).metadata == fm_package.metadata
    assert again.partition is None  # only packages compiled in this process have it
    assert npu.load(str(path)).name == str(path)


def test_compile_from_bytes_equals_from_path(fm_package):
    data = (FM / "fashion_mnist.onnx").read_bytes()
    from_bytes = npu.compile(data)
    a, b = from_bytes.metadata, fm_package.metadata
    assert a["model"]["source"] == "<bytes>"
    a["model"].pop("source")
    b["model"].pop("source")
    a["model"].pop("name", None)
    b["model"].pop("name", None)
    assert a == b
    assert from_bytes.name == "<bytes>"


@pytest.fixture(scope="module")
def int8_file():
    """Fashion-MNIST quantized with the calibration images given as a .npy path."""
    return npu.compile(FM / "fashion_mnist.onnx", quantize="int8",
                       calibration=FM / "calibration.npy")


def test_precision_and_int8(fm_package, int8_file):
    fp16 = npu.compile(FM / "fashion_mnist.onnx", precision="fp16")
    cal = np.load(FM / "calibration.npy")
    int8 = npu.compile(FM / "fashion_mnist.onnx", quantize="int8", calibration=cal)
    assert int8.to_bytes() != fm_package.to_bytes()
    strip = lambda m: {k: v for k, v in m.items() if k != "model"}  # noqa: E731
    assert strip(int8.metadata) == strip(int8_file.metadata)
    # int8 and fp16 are cheaper than fp32 on the device (docs: 2.8x fewer cycles for int8).
    assert int8.estimated_cycles < fp16.estimated_cycles < fm_package.estimated_cycles


def test_params_dict_and_npz(tmp_path):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((4, 8)).astype(np.float32)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    graph = matmul_relu_graph()
    from_dict = npu.compile(graph.encode(), params={"w": w})
    np.savez(tmp_path / "p.npz", w=w)
    (tmp_path / "g.json").write_text(graph)
    from_npz = npu.compile(tmp_path / "g.json", params=tmp_path / "p.npz")
    for pkg in (from_dict, from_npz):
        assert [t.name for t in pkg.inputs] == ["x"]
        with npu.Session(pkg) as s:
            y = s.run({"x": x})["output_0"]
        np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)


def test_input_shapes_bind_a_symbolic_batch(fm_batch):
    pkg = npu.compile(FM / "fashion_mnist.onnx", input_shapes={"image": (4, 1, 28, 28)})
    assert pkg.inputs[0].shape == (4, 1, 28, 28)


def test_errors_carry_the_tools_message(tmp_path):
    missing = tmp_path / "nope.onnx"
    with pytest.raises(npu.Error) as e:
        npu.compile(missing)
    r = run_tool(tool("npu-compile"), missing, "-o", tmp_path / "x.npub", check=False)
    assert r.returncode == 1
    assert r.stderr.strip() == "npu-compile: " + str(e.value)
    assert isinstance(e.value, RuntimeError)
    assert e.value.errno is not None

    with pytest.raises(npu.Error, match="--precision fp8: expected fp32, fp16 or bf16"):
        npu.compile(FM / "fashion_mnist.onnx", precision="fp8")
    with pytest.raises(npu.Error, match="needs --calibration"):
        npu.compile(FM / "fashion_mnist.onnx", quantize="int8")
    with pytest.raises(npu.Error, match="unsupported"):
        npu.compile(FM / "fashion_mnist.onnx", quantize="int4", calibration=np.zeros(1))


def test_corrupt_models_raise():
    data = (FM / "fashion_mnist.onnx").read_bytes()
    for bad in (b"\x00\x01garbage" * 10, data[: len(data) // 2], b"{ not json"):
        with pytest.raises(npu.Error) as e:
            npu.compile(bad)
        assert "<bytes>" in str(e.value)
    with pytest.raises(npu.Error, match="const"):
        npu.compile(matmul_relu_graph().encode())  # the const node w has no value
    with pytest.raises(TypeError):
        npu.compile(12)


def test_corrupt_packages_raise(fm_package, tmp_path):
    data = bytearray(fm_package.to_bytes())
    data[len(data) // 2] ^= 0xFF
    with pytest.raises(npu.Error):
        npu.load(bytes(data))
    path = tmp_path / "cut.npub"
    path.write_bytes(bytes(data[:100]))
    with pytest.raises(npu.Error, match="cut.npub"):
        npu.load(path)
    with pytest.raises(npu.Error):
        npu.load(tmp_path / "missing.npub")


def test_int8_tool_and_module_agree(tmp_path, int8_file):
    out = tmp_path / "q.npub"
    run_tool(tool("npu-compile"), FM / "fashion_mnist.onnx", "-o", out, "--quantize", "int8",
             "--calibration", FM / "calibration.npy")
    mine = int8_file
    cli = npu.load(out)
    assert {k: v for k, v in cli.metadata.items() if k != "model"} == \
        {k: v for k, v in mine.metadata.items() if k != "model"}

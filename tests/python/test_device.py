"""npu.Device, raw command buffers with NumPy buffers, npu.assemble() and npu.disassemble()."""

import json

import numpy as np
import pytest

import npu
from conftest import EXAMPLES, run_tool, tool

IN, W, OUT = 0x100000000, 0x100010000, 0x100100000


def asm(name):
    return npu.assemble((EXAMPLES / name).read_text(), filename=name)


def test_info_is_npu_info_json():
    info = npu.Device().info
    assert info["sram_size"] == 2 << 20
    assert info["clock_hz"] == 1_000_000_000
    assert info["platform"] == "emulator"
    names = [e["name"] for e in info["engines"]]
    assert {"cp", "dma_in", "dma_out", "matrix", "vector"} <= set(names)
    assert info["va_range"]["align"] == 0x10000
    cli = json.loads(run_tool(tool("npu-info"), "--json").stdout)
    assert cli["parameters"]["sram_size"] == info["sram_size"]
    assert cli["engines"] == info["engines"]


def test_device_config_changes_info(tmp_path):
    cfg = tmp_path / "big.json"
    cfg.write_text(json.dumps({"sram_size": 4 << 20}))
    assert npu.Device(f"emu:{cfg}").info["sram_size"] == 4 << 20
    assert npu.device_config(cfg)["sram_size"] == 4 << 20
    assert npu.device_config()["matrix"]["int8_rows"] == 32
    with pytest.raises(npu.Error):
        npu.Device("emu:" + str(tmp_path / "missing.json"))


def test_assemble_disassemble_roundtrip(tmp_path):
    for path in sorted(EXAMPLES.glob("*.npuasm")):
        data = npu.assemble(path.read_text(), filename=path.name)
        assert isinstance(data, bytes) and data[:4] == b"NPUC"
        text = npu.disassemble(data)
        assert npu.assemble(text) == data, path.name
        # The same bytes as npu-as writes.
        out = tmp_path / (path.stem + ".bin")
        run_tool(tool("npu-as"), path, "-o", out)
        assert out.read_bytes() == data, path.name
    assert "# [0]" not in npu.disassemble(asm("dma_copy.npuasm"), index_comments=False)


def test_assembler_errors():
    with pytest.raises(npu.Error, match=r"prog.npuasm:1: .*strid_h"):
        npu.assemble("conv2d strid_h=1\nend\n", filename="prog.npuasm")
    with pytest.raises(npu.Error, match="bad magic"):
        npu.disassemble(b"\x00" * 64)
    bad = asm("dma_copy.npuasm").replace(b"NPUC", b"NPUX")
    with pytest.raises(npu.Error):
        npu.disassemble(bad)


def test_dma_copy_pads_the_tile():
    x = np.arange(1, 17, dtype=np.float32).reshape(4, 4)
    r = npu.Device().submit(asm("dma_copy.npuasm"), {IN: x, OUT: 144}, read_only=[IN])
    assert r.status == "ok" and r.cycles > 0
    assert list(r.outputs) == [OUT]
    out = np.frombuffer(r.outputs[OUT], np.float32).reshape(6, 6)
    np.testing.assert_array_equal(out, np.pad(x, 1))
    assert 0 < r.engines["dma_in"] <= 1
    assert "job ok" in r.report() and "dma bytes in" in r.report(stats=True)


def test_matmul_against_numpy():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4, 8)).astype(np.float32)
    b = rng.standard_normal((6, 8)).astype(np.float32)
    r = npu.Device().submit(asm("matmul.npuasm"), {IN: a, W: b, OUT: 192})
    out = np.frombuffer(r.outputs[OUT], np.float32).reshape(2, 4, 6)
    np.testing.assert_allclose(out, a @ b.T, rtol=1e-5, atol=1e-5)
    # Buffers not marked read_only are outputs too: A and B come back unchanged.
    np.testing.assert_array_equal(np.frombuffer(r.outputs[IN], np.float32), a.ravel())


def test_bytes_buffers_and_cmdbuf_path(tmp_path):
    data = asm("dma_copy.npuasm")
    (tmp_path / "c.bin").write_bytes(data)
    x = np.arange(16, dtype=np.float32)
    r = npu.Device().submit(tmp_path / "c.bin", {IN: x.tobytes(), OUT: 144})
    assert np.frombuffer(r.outputs[OUT], np.float32).reshape(6, 6)[1, 1:5].tolist() == \
        [0, 1, 2, 3]


def test_racecheck_reports_the_hazards(tmp_path):
    x = np.arange(256, dtype=np.int8)
    r = npu.Device().submit(asm("race.npuasm"), {IN: x, OUT: 256}, racecheck=True)
    kinds = [h["kind"] for h in r.hazards]
    assert kinds == ["RAW", "WAR"]
    assert r.hazards[0]["first"]["opcode"] == "dma_load"
    assert r.hazards[0]["second"]["engine"] == "vector"
    # The same lines npu-submit --racecheck prints.
    (tmp_path / "race.bin").write_bytes(asm("race.npuasm"))
    (tmp_path / "in.bin").write_bytes(x.tobytes())
    cli = run_tool(tool("npu-submit"), tmp_path / "race.bin", "--buffer",
                   f"{IN:#x}={tmp_path / 'in.bin'}", "--buffer", f"{OUT:#x}=size:256",
                   "--racecheck", check=False)
    assert cli.returncode == 3
    for h in r.hazards:
        assert "  " + h["text"] in cli.stdout
    clean = npu.Device().submit(asm("dma_copy.npuasm"), {IN: np.zeros(16, np.float32),
                                                         OUT: 144}, racecheck=True)
    assert clean.hazards == []


def test_faults_and_errors(tmp_path):
    dev = npu.Device()
    bad = npu.assemble(
        "dma_load dram_addr=0x200000000 sram_addr=0 elem_size=4 size=4,1,1 "
        "dram_stride=4,16,16 sram_stride=16,16\nend\n")
    with pytest.raises(npu.Error, match=r"job error: mmu on dma_in at command 0 \(dma_load\), "
                                        r"address 0x200000000"):
        dev.submit(bad, {OUT: 64}, skip_validation=True)
    r = dev.submit(bad, {OUT: 64}, skip_validation=True, check=False)
    assert r.status == "error" and "mmu on dma_in" in r.fault
    with pytest.raises(npu.Error, match="not inside a buffer"):
        dev.submit(bad, {OUT: 64})  # validation refuses it first
    with pytest.raises(npu.Error, match="va alignment"):
        dev.submit(asm("dma_copy.npuasm"), {IN + 4: 64, OUT: 144})
    with pytest.raises(npu.Error, match="overlaps"):
        dev.submit(asm("dma_copy.npuasm"), {IN: 0x20000, IN + 0x10000: 64, OUT: 144})
    with pytest.raises(npu.Error, match="size must be at least 1"):
        dev.submit(asm("dma_copy.npuasm"), {IN: 0, OUT: 144})
    with pytest.raises(npu.Error, match="no buffer at that address"):
        dev.submit(asm("dma_copy.npuasm"), {IN: 64, OUT: 144}, read_only=[0x5000000])
    with pytest.raises(npu.Error):
        dev.submit(b"garbage!" * 8, {OUT: 64})
    with pytest.raises(npu.Error):
        npu.Device("nosuchscheme:x")


def test_submit_trace(tmp_path):
    x = np.arange(128, dtype=np.int8)
    r = npu.Device().submit(asm("sync.npuasm"), {IN: x, OUT: 4224})
    out = np.frombuffer(r.outputs[OUT], np.int8)
    np.testing.assert_array_equal(out[:128], x)
    np.testing.assert_array_equal(out[0x1000:0x1080], x)
    path = tmp_path / "t.json"
    r.write_trace(path)
    trace = json.loads(path.read_text())
    assert trace["otherData"]["cycles"] == r.cycles
    assert any(e.get("name", "").startswith("marker") for e in trace["traceEvents"])

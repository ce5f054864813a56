"""npu.Session: results against PyTorch's and npu-submit's, statistics, traces, errors."""

import json

import numpy as np
import pytest

import npu
from conftest import FM, needs_compiler, run_tool, tool

pytestmark = needs_compiler


@pytest.fixture(scope="module")
def session(fm_package):
    with npu.Session(fm_package) as s:
        yield s


def test_batch_matches_pytorch(session, fm_batch, fm_expected, fm_labels):
    out = session.run({"image": fm_batch})
    assert list(out) == ["logits"]
    logits = out["logits"]
    assert logits.shape == (8, 10) and logits.dtype == np.float32
    np.testing.assert_allclose(logits, fm_expected, rtol=1e-3, atol=1e-4)
    assert (logits.argmax(axis=1) == fm_labels).all()


def test_single_array_and_slices(session, fm_batch, fm_expected):
    one = session.run(fm_batch[3:4])["logits"]
    np.testing.assert_allclose(one[0], fm_expected[3], rtol=1e-3, atol=1e-4)
    # A batch of 2 runs as 2 slices of the compiled batch 1.
    two = session.run({"image": fm_batch[5:7]})["logits"]
    np.testing.assert_allclose(two, fm_expected[5:7], rtol=1e-3, atol=1e-4)


def test_non_contiguous_and_byteswapped_inputs(session, fm_batch):
    ref = session.run({"image": fm_batch[:2]})["logits"]
    wide = np.zeros((2, 1, 28, 56), np.float32)
    wide[..., ::2] = fm_batch[:2]
    strided = wide[..., ::2]
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(session.run({"image": strided})["logits"], ref)
    swapped = fm_batch[:2].astype(">f4")
    np.testing.assert_array_equal(session.run({"image": swapped})["logits"], ref)
    before = fm_batch.copy()
    session.run({"image": fm_batch})
    np.testing.assert_array_equal(fm_batch, before)  # inputs are read, never written


def test_outputs_are_owned_arrays(session, fm_batch):
    a = session.run({"image": fm_batch[:1]})["logits"]
    b = session.run({"image": fm_batch[1:2]})["logits"]
    assert not np.shares_memory(a, b)
    a[:] = 0  # writable, and independent of the session
    assert b.any()


def test_specs(session):
    assert [(t.name, t.shape, t.dtype) for t in session.inputs] == \
        [("image", ("N", 1, 28, 28), np.dtype(np.float32))]
    assert [(t.name, t.shape) for t in session.outputs] == [("logits", ("N", 10))]
    assert "TensorSpec(name='image'" in repr(session.inputs[0])
    assert session.device == "emu:"


def test_stats_match_npu_submit(fm_package, session, fm_batch, tmp_path):
    image = fm_batch[:1]
    session.run({"image": image})
    st = session.last_stats
    pkg = tmp_path / "fm.npub"
    fm_package.save(pkg)
    np.save(tmp_path / "x.npy", image)
    r = run_tool(tool("npu-submit"), pkg, "--input", f"image={tmp_path / 'x.npy'}", "--json")
    report = json.loads(r.stdout)
    assert st.cycles == report["cycles"] > 0
    engines = {e["name"]: e["utilization"] for e in report["profile"]["engines"]}
    assert st.engines.keys() == engines.keys()
    for name, u in st.engines.items():
        assert 0.0 <= u <= 1.0
        assert u == pytest.approx(engines[name])
    assert st.counters["macs"] == report["profile"]["macs"]
    assert st.host_ms > 0
    assert st.device_ms == pytest.approx(st.cycles / st.clock_hz * 1e3)


def test_layers_predicted_vs_measured(session, fm_batch, fm_package):
    session.run({"image": fm_batch[:1]})
    layers = session.last_stats.layers
    report = [r for r in fm_package.report() if r["engine"] != "host"]
    assert [l["layer"] for l in layers] == [r["layer"] for r in report]
    for l, r in zip(layers, report):
        assert l["estimated_cycles"] == r["estimated_cycles"]
        assert l["measured_cycles"] > 0
        # The compiler replays the emulator's schedule: estimate and measurement agree.
        assert l["measured_cycles"] == pytest.approx(l["estimated_cycles"], rel=0.05)
    assert sum(l["measured_cycles"] for l in layers) == session.last_stats.cycles
    segs = session.last_stats.segments
    assert segs and segs[0]["kind"] == "device"


def test_write_trace(session, fm_batch, tmp_path):
    session.run({"image": fm_batch[:1]})
    path = tmp_path / "t.json"
    session.write_trace(path)
    trace = json.loads(path.read_text())
    names = {e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    assert {"dma_in", "dma_out", "matrix", "vector"} <= names
    slices = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert any(e["name"] == "conv2d" for e in slices)
    assert trace["otherData"]["cycles"] == session.last_stats.cycles


def test_racecheck_run_is_clean(session, fm_batch):
    session.run({"image": fm_batch[:1]}, racecheck=True)
    assert session.last_stats.hazards == []


def test_input_errors(session, fm_batch):
    x = fm_batch[:1]
    with pytest.raises(npu.Error, match=r"unknown input 'img' \(inputs: image\)"):
        session.run({"img": x})
    with pytest.raises(npu.Error, match="missing input 'image'"):
        session.run({})
    with pytest.raises(npu.Error, match="input 'image': dtype float64, expected float32"):
        session.run({"image": x.astype(np.float64)})
    with pytest.raises(npu.Error, match=r"input 'image': shape \[1, 28, 28\], expected "
                                        r"\[N, 1, 28, 28\]"):
        session.run({"image": x[0]})
    with pytest.raises(npu.Error, match="dtype complex64 is not supported"):
        session.run({"image": x.astype(np.complex64)})
    with pytest.raises(TypeError):
        session.run({1: x})
    # The session still works after every error.
    assert session.run({"image": x})["logits"].shape == (1, 10)


def test_error_message_is_the_tools(fm_package, tmp_path, fm_batch):
    pkg = tmp_path / "fm.npub"
    fm_package.save(pkg)
    np.save(tmp_path / "x.npy", fm_batch[:1].astype(np.float64))
    r = run_tool(tool("npu-submit"), pkg, "--input", f"image={tmp_path / 'x.npy'}", check=False)
    assert r.returncode == 2
    with npu.Session(pkg) as s:
        with pytest.raises(npu.Error) as e:
            s.run({"image": fm_batch[:1].astype(np.float64)})
    assert r.stderr.strip() == "npu-submit: " + str(e.value)


def test_closed_session(fm_package, fm_batch):
    s = npu.Session(fm_package)
    s.run({"image": fm_batch[:1]})
    s.close()
    assert s.closed
    with pytest.raises(npu.Error, match="the session is closed"):
        s.run({"image": fm_batch[:1]})
    s.close()  # twice is fine
    assert s.inputs[0].name == "image"  # the description stays
    with npu.Session(fm_package) as t:
        pass
    with pytest.raises(npu.Error, match="closed"):
        t.run({"image": fm_batch[:1]})


def test_invalid_sessions(fm_package, tmp_path):
    with pytest.raises(npu.Error, match="nope.npub"):
        npu.Session(tmp_path / "nope.npub")
    with pytest.raises(npu.Error):
        npu.Session(fm_package, device="bogus:")
    with pytest.raises(npu.Error, match="max_parallel must be at least 1"):
        npu.Session(fm_package, max_parallel=0)
    with pytest.raises(npu.Error, match="no run yet"):
        npu.Session(fm_package).write_trace(tmp_path / "t.json")


def test_session_from_path_and_device_config(fm_package, fm_batch, tmp_path):
    pkg = tmp_path / "fm.npub"
    fm_package.save(pkg)
    cfg = tmp_path / "slow.json"
    cfg.write_text(json.dumps({"clock_hz": 500000000}))
    with npu.Session(str(pkg), device=f"emu:{cfg}") as s:
        s.run({"image": fm_batch[:1]})
        assert s.last_stats.clock_hz == 500000000
    with npu.Session(pkg, device=npu.Device("emu:")) as s:
        assert s.run(fm_batch[:1])["logits"].shape == (1, 10)


def test_without_profile(fm_package, fm_batch, tmp_path):
    with npu.Session(fm_package, profile=False) as s:
        s.run({"image": fm_batch[:1]})
        st = s.last_stats
        assert st.cycles > 0
        assert st.engines == {} and st.layers == []
        with pytest.raises(npu.Error, match="no job profile"):
            s.write_trace(tmp_path / "t.json")


def test_timeout(session, fm_batch):
    with pytest.raises(npu.Error):
        session.run({"image": np.repeat(fm_batch, 64, axis=0)}, timeout=1e-6)
    with pytest.raises(npu.Error, match="timeout must not be negative"):
        session.run({"image": fm_batch[:1]}, timeout=-1)
    assert session.run({"image": fm_batch[:1]}, timeout=60)["logits"].shape == (1, 10)


def test_docstrings():
    for obj in (npu.Session, npu.Session.run, npu.Package, npu.Device, npu.Device.submit,
                npu.compile, npu.load, npu.assemble, npu.disassemble, npu.RunStats,
                npu.plot.roofline):
        assert obj.__doc__ and len(obj.__doc__) > 40, obj
    import pydoc
    text = pydoc.render_doc(npu.Session, renderer=pydoc.plaintext)
    assert "last_stats" in text and "write_trace" in text and "max_parallel" in text

"""The npu-daemon device ("unix:PATH") behind npu.Device and npu.Session."""

import threading

import numpy as np

import npu
from conftest import EXAMPLES, needs_compiler


def test_device_info_names_the_daemon(daemon):
    info = npu.Device(f"unix:{daemon}").info
    assert info["device"] == f"unix:{daemon}"
    assert info["daemon"]["socket"] == str(daemon)
    assert info["sram_size"] == npu.Device().info["sram_size"]


def test_raw_job_through_the_daemon(daemon):
    x = np.arange(1, 17, dtype=np.float32)
    code = npu.assemble((EXAMPLES / "dma_copy.npuasm").read_text())
    r = npu.Device(f"unix:{daemon}").submit(code, {0x100000000: x, 0x100100000: 144})
    out = np.frombuffer(r.outputs[0x100100000], np.float32).reshape(6, 6)
    np.testing.assert_array_equal(out, np.pad(x.reshape(4, 4), 1))


@needs_compiler
def test_session_on_the_daemon(daemon, fm_package, fm_batch, fm_expected):
    with npu.Session(fm_package) as local:
        ref = local.run({"image": fm_batch})["logits"]
        cycles = local.last_stats.cycles
    with npu.Session(fm_package, device=f"unix:{daemon}", max_parallel=2) as s:
        out = s.run({"image": fm_batch})["logits"]
        np.testing.assert_array_equal(out, ref)
        np.testing.assert_allclose(out, fm_expected, rtol=1e-3, atol=1e-4)
        assert s.last_stats.cycles == cycles
        # Two threads: two connections to the one daemon device.
        results = [None, None]

        def worker(k):
            results[k] = s.run({"image": fm_batch[k * 4:(k + 1) * 4]})["logits"]

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        np.testing.assert_array_equal(np.concatenate(results), ref)

"""One npu.Session used from several threads at once: every result right, the GIL released."""

import threading
import time

import numpy as np
import pytest

import npu
from conftest import needs_compiler

pytestmark = needs_compiler


def test_threads_share_one_session(fm_package, fm_batch):
    with npu.Session(fm_package, max_parallel=3) as s:
        reference = [s.run({"image": fm_batch[i:i + 1]})["logits"] for i in range(8)]
        errors, results = [], {}

        def worker(t):
            try:
                for k in range(12):
                    i = (t * 5 + k) % 8
                    results[(t, k)] = (i, s.run({"image": fm_batch[i:i + 1]})["logits"])
            except Exception as e:  # noqa: BLE001 -- reported below
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert len(results) == 6 * 12
        for i, logits in results.values():
            np.testing.assert_array_equal(logits, reference[i])
        assert 1 <= s.instances <= 3
        assert s.last_stats.cycles > 0


def test_run_releases_the_gil(fm_package, fm_batch):
    with npu.Session(fm_package, max_parallel=1, profile=False) as s:
        s.run({"image": fm_batch})
        t0 = time.perf_counter()
        s.run({"image": fm_batch})
        per_batch = time.perf_counter() - t0
        # A run of about 0.3 s, whatever the build (a sanitizer's is slower).
        big = np.repeat(fm_batch, int(np.clip(0.3 / per_batch, 2, 160)), axis=0)
        t0 = time.perf_counter()
        s.run({"image": big})
        duration = time.perf_counter() - t0
        done = threading.Event()
        thread = threading.Thread(target=lambda: (s.run({"image": big}), done.set()))
        stamps = []
        thread.start()
        while not done.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0)
        thread.join()
    # With the GIL held for the whole run this thread would stop for `duration`.
    gaps = np.diff(stamps)
    assert len(stamps) > 10
    assert gaps.max() < max(0.5 * duration, 0.1), (gaps.max(), duration)


def test_close_while_threads_run(fm_package, fm_batch):
    s = npu.Session(fm_package, max_parallel=2)
    outcomes = []

    def worker():
        try:
            for _ in range(20):
                s.run({"image": fm_batch[:2]})
            outcomes.append("finished")
        except npu.Error as e:
            outcomes.append(str(e))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.05)
    s.close()
    for t in threads:
        t.join()
    assert len(outcomes) == 3
    assert all(o == "finished" or "the session is closed" in o for o in outcomes), outcomes
    with pytest.raises(npu.Error, match="closed"):
        s.run({"image": fm_batch[:1]})

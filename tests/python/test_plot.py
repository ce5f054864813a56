"""npu.plot: PNGs written and read back; matplotlib stays optional."""

import os
import subprocess
import sys

import numpy as np
import pytest

import npu
from conftest import needs_compiler

mpl_image = pytest.importorskip("matplotlib.image", reason="python3-matplotlib not installed")

pytestmark = needs_compiler


def read_png(path):
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    img = mpl_image.imread(str(path))
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 300
    assert img[..., :3].std() > 0.05  # not a blank canvas
    return img


def test_roofline_and_cycles_of_a_run(fm_package, fm_batch, tmp_path):
    with npu.Session(fm_package) as s:
        s.run({"image": fm_batch[:1]})
        fig = npu.plot.roofline(s, tmp_path / "roof.png")
        read_png(tmp_path / "roof.png")
        ax = fig.axes[0]
        assert ax.get_xscale() == "log"
        # One point per layer with MACs: the two convolutions and the two matrix products.
        points = sum(len(c.get_offsets()) for c in ax.collections)
        assert points == sum(1 for l in s.last_stats.layers if l["macs"])
        npu.plot.cycles(s.last_stats, tmp_path / "cycles.png")
        read_png(tmp_path / "cycles.png")
        npu.plot.summary(s, tmp_path / "summary.png", title="fashion-mnist")
        img = read_png(tmp_path / "summary.png")
        assert img.shape[1] > img.shape[0]


def test_package_estimates_and_configs(fm_package, tmp_path):
    npu.plot.roofline(fm_package, tmp_path / "est.png",
                      device_config={**npu.device_config(), "dma": {"bytes_per_cycle": 8,
                                                                     "latency": 64}})
    read_png(tmp_path / "est.png")
    fig = npu.plot.cycles(fm_package)  # no path: only the Figure
    assert fig.axes[0].get_legend_handles_labels()[1] == ["estimated (compiler)"]
    with pytest.raises(TypeError):
        npu.plot.roofline(42)
    with npu.Session(fm_package, profile=False) as s:
        s.run(np.zeros((1, 1, 28, 28), np.float32))
        with pytest.raises(npu.Error, match="no per-layer timings"):
            npu.plot.cycles(s.last_stats)


def test_without_matplotlib(fm_package, tmp_path):
    """`import npu` needs no matplotlib; plotting says what is missing."""
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "import npu\n"
        "try:\n"
        "    npu.plot.roofline(npu.load(sys.argv[1]), 'x.png')\n"
        "except npu.Error as e:\n"
        "    print('ERR', e)\n")
    path = tmp_path / "fm.npub"
    fm_package.save(path)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(npu.__file__))}
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                       cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ERR npu.plot needs matplotlib")
    assert not (tmp_path / "x.png").exists()

"""Pictures of a package or a run, as PNG files (or matplotlib Figures):

- roofline(): each layer's achieved MACs per cycle against its arithmetic intensity (MACs per
  DRAM byte), under the device's compute roofs (the MAC array at int8, fp16/bf16 and fp32) and
  its DMA roofs: one DMA engine's bandwidth (a layer whose bytes all go one way, such as a
  weight-streaming matrix product, is bound by it) and both engines' together (no layer can
  move its bytes faster);
- cycles(): the compiler's estimated cycles next to the measured ones, per layer;
- summary(): both side by side.

`source` is an npu.Session (its last run; or, before the first, its package's estimates), an
npu.RunStats (Session.last_stats) or an npu.Package (estimates only). matplotlib (Debian's
python3-matplotlib) is needed only here, and only when a function is called: without it they
raise npu.Error. Figures are drawn with the Agg canvas, never pyplot, so the backend of an
interactive session is left alone; each function returns the matplotlib Figure and writes it
to `path` when given (the format follows the extension, PNG by default).
"""

import os

from . import _npu

__all__ = ["cycles", "roofline", "summary"]


def _matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise _npu.Error("npu.plot needs matplotlib (Debian: apt-get install "
                         "python3-matplotlib): " + str(e)) from None
    return Figure, FigureCanvasAgg


def _rows(source):
    """Per-layer rows (dicts with layer, op, macs, bytes, estimated_cycles and, for a run,
    measured_cycles) and a description of where they come from."""
    if isinstance(source, _npu.Session):
        if source.last_stats is not None and source.last_stats.layers:
            return source.last_stats.layers, "measured"
        source = source.package
    if isinstance(source, _npu.RunStats):
        if not source.layers:
            raise _npu.Error("npu.plot: the run has no per-layer timings (run with "
                             "Session(..., profile=True))")
        return source.layers, "measured"
    if isinstance(source, _npu.Package):
        rows = [r for r in source.report() if r["engine"] != "host"]
        return rows, "estimated"
    raise TypeError("npu.plot: expected an npu.Session, npu.RunStats or npu.Package, got "
                    + type(source).__name__)


def _config(source, device_config):
    if isinstance(device_config, dict):
        return device_config
    if device_config is not None:
        return _npu.device_config(device_config)
    if isinstance(source, _npu.Session) and source.device.startswith("emu:") \
            and len(source.device) > 4:
        return _npu.device_config(source.device[4:])
    return _npu.device_config()


def _save(fig, path):
    if path is not None:
        fig.savefig(os.fspath(path), dpi=120)
    return fig


def _draw_roofline(ax, rows, kind, cfg):
    points = [r for r in rows if r["macs"] and r["bytes"]]
    if not points:
        raise _npu.Error("npu.plot.roofline: no layer with MACs and DRAM bytes to plot")
    cycles_key = "measured_cycles" if kind == "measured" else "estimated_cycles"
    xs = [r["macs"] / r["bytes"] for r in points]
    ys = [r["macs"] / max(r[cycles_key], 1) for r in points]
    m = cfg["matrix"]
    roofs = [("int8", m["int8_rows"] * m["int8_cols"]),
             ("fp16/bf16", m["fp16_rows"] * m["fp16_cols"]),
             ("fp32", m["fp32_rows"] * m["fp32_cols"])]
    bpc = cfg["dma"]["bytes_per_cycle"]
    dma = 2 * bpc  # dma_in and dma_out at once: no layer moves its bytes faster
    lo = min(xs + [r / dma for _, r in roofs]) / 2
    hi = max(xs + [r / bpc for _, r in roofs]) * 2
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.plot([lo, hi], [dma * lo, dma * hi], color="0.5", linestyle="--",
            label=f"DMA roof, in + out ({dma} B/cycle)")
    ax.plot([lo, hi], [bpc * lo, bpc * hi], color="0.5", linestyle=(0, (1, 1)),
            label=f"DMA roof, one direction ({bpc} B/cycle)")
    for (name, peak), style in zip(roofs, ["-", "-.", ":"]):
        ax.plot([peak / dma, hi], [peak, peak], color="0.2", linestyle=style,
                label=f"{name} MAC array ({peak} MACs/cycle)")
    ops = sorted({r["op"] for r in points})
    colors = {op: f"C{i % 10}" for i, op in enumerate(ops)}
    for op in ops:
        sel = [i for i, r in enumerate(points) if r["op"] == op]
        ax.scatter([xs[i] for i in sel], [ys[i] for i in sel], color=colors[op], label=op,
                   zorder=3, s=28)
    if len(points) <= 12:
        for x, y, r in zip(xs, ys, points):
            ax.annotate(r["layer"].split("/")[-2] if r["layer"].count("/") >= 2 else r["layer"],
                        (x, y), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (MACs per DRAM byte)")
    ax.set_ylabel(f"achieved MACs per cycle ({kind})")
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize=7, loc="lower right")


def _draw_cycles(ax, rows, kind):
    names = [r["layer"] for r in rows]
    est = [r["estimated_cycles"] for r in rows]
    y = list(range(len(rows)))
    h = 0.4 if kind == "measured" else 0.8
    ax.barh([v - h / 2 if kind == "measured" else v for v in y], est, height=h,
            label="estimated (compiler)", color="C0")
    if kind == "measured":
        ax.barh([v + h / 2 for v in y], [r["measured_cycles"] for r in rows], height=h,
                label="measured (device)", color="C1")
    ax.set_yticks(y)
    ax.set_yticklabels([n if len(n) <= 28 else "…" + n[-27:] for n in names], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("cycles")
    ax.grid(True, axis="x", linewidth=0.3)
    ax.legend(fontsize=7, loc="lower right")


def roofline(source, path=None, *, device_config=None, title=None):
    """Draws the per-layer roofline of `source` (see the module's docstring) and writes it to
    `path` when given; returns the Figure. device_config: a path or a dict
    (npu.device_config()) for the roofs; by default the session's emulator config, else the
    default device's. Layers without MACs (pooling, activations, copies) are left out."""
    Figure, Canvas = _matplotlib()
    rows, kind = _rows(source)
    fig = Figure(figsize=(7, 5))
    Canvas(fig)  # draws with Agg, never pyplot
    ax = fig.add_subplot(1, 1, 1)
    _draw_roofline(ax, rows, kind, _config(source, device_config))
    ax.set_title(title or "roofline per layer")
    fig.tight_layout()
    return _save(fig, path)


def cycles(source, path=None, *, title=None):
    """Draws estimated (compiler) and, for a run, measured (device) cycles per layer as
    horizontal bars, writes them to `path` when given and returns the Figure."""
    Figure, Canvas = _matplotlib()
    rows, kind = _rows(source)
    if not rows:
        raise _npu.Error("npu.plot.cycles: no device layers to plot")
    fig = Figure(figsize=(7, max(3, 0.22 * len(rows) + 1.2)))
    Canvas(fig)  # draws with Agg, never pyplot
    ax = fig.add_subplot(1, 1, 1)
    _draw_cycles(ax, rows, kind)
    ax.set_title(title or f"cycles per layer ({kind})")
    fig.tight_layout()
    return _save(fig, path)


def summary(source, path=None, *, device_config=None, title=None):
    """roofline() and cycles() side by side in one Figure, written to `path` when given."""
    Figure, Canvas = _matplotlib()
    rows, kind = _rows(source)
    fig = Figure(figsize=(13, max(5.5, 0.17 * len(rows) + 1.5)))
    Canvas(fig)  # draws with Agg, never pyplot
    roof = fig.add_subplot(1, 2, 1)
    _draw_roofline(roof, rows, kind, _config(source, device_config))
    roof.set_box_aspect(0.85)  # square-ish at the top, however many layers the bars list
    roof.set_anchor("N")
    _draw_cycles(fig.add_subplot(1, 2, 2), rows, kind)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 0.97 if title else 1))
    return _save(fig, path)

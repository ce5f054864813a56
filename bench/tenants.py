#!/usr/bin/python3
"""Multi-tenant benchmark (issue 30, `make bench-tenants`): one device shared through npu-daemon.

A victim client (SqueezeNet 1.1 by default) measures its latency with `npu-submit --repeat`
alone and while 1-3 flooding clients (ResNet-50 by default, each `npu-submit --repeat` in a
loop) keep the device busy; at NORMAL and at REALTIME priority; with preemption at safe points
and without it (`npu-daemon --no-preemption`: a started job runs to its end). Every client is its
own process and its own connection, so each is a separate file of the driver, as separate
applications would be. Prints one table (median and p90 latency in ms, and the ratio of the
median to the victim's solo median, measured on the same daemon just before the flooders
start, so that the machine's load at the time is in both) and writes it as JSON.

The models are torchvision architectures with fixed random weights
(scripts/export_torchvision.py), compiled once with npu-compile (fp32) into WORK. Needs
/usr/bin/python3 with torch, torchvision and onnx (`make deps-realmodels`).

Usage: bench/tenants.py --build BUILD [--work DIR] [--victim squeezenet1_1] [--flooder resnet50]
                        [--flooders 0,1,2,3] [--repeat 20] [--json FILE]
                        [--device-config FILE] [--modes on,off] [--priorities normal,realtime]

The daemon is started per configuration with PR_SET_PDEATHSIG, every flooder too, so nothing
outlives the benchmark; each process is killed at the end of its configuration.
"""
import argparse
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PR_SET_PDEATHSIG = 1


def die_with_parent():
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def tool(build, name):
    path = os.path.join(build, "tools", name, name)
    if not os.access(path, os.X_OK):
        sys.exit(f"bench-tenants: {path} is missing: build it first")
    return path


def prepare(build, work, model):
    """Exports and compiles `model` into work/model/ once; returns (package, input)."""
    d = os.path.join(work, model)
    onnx, npub, npy = (os.path.join(d, f) for f in ("model.onnx", "model.npub", "input.npy"))
    if not os.path.exists(onnx):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "scripts/export_torchvision.py"),
                        work, "--models", model, "--runs", "1"], check=True,
                       stdout=subprocess.DEVNULL)
    if not os.path.exists(npub):
        subprocess.run([tool(build, "npu-compile"), onnx, "-o", npub], check=True,
                       stdout=subprocess.DEVNULL)
    return npub, npy


class Daemon:
    def __init__(self, build, socket, preemption, config=None):
        args = [tool(build, "npu-daemon"), "--socket", socket, "--allow-realtime",
                str(os.getuid())]
        if config:
            args += ["--device-config", config]
        if not preemption:
            args.append("--no-preemption")
        env = dict(os.environ, NPU_LOG_LEVEL="warn")
        self.proc = subprocess.Popen(args, stderr=subprocess.DEVNULL, env=env,
                                     preexec_fn=die_with_parent)
        deadline = time.monotonic() + 20
        while not os.path.exists(socket):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                sys.exit("bench-tenants: npu-daemon did not start")
            time.sleep(0.01)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def submit_args(build, socket, npub, npy, outdir, priority, repeat, warmup):
    return [tool(build, "npu-submit"), npub, "--input", f"input={npy}", "--output-dir", outdir,
            "--device", f"unix:{socket}", "--priority", priority, "--repeat", str(repeat),
            "--warmup", str(warmup), "--json"]


def measure(args):
    out = subprocess.run(args, check=True, capture_output=True, text=True, timeout=1800).stdout
    lat = json.loads(out)["benchmark"]["latency_ms"]
    return lat["median"], lat["p90"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default=None, help="models and outputs (default: BUILD/bench-tenants)")
    ap.add_argument("--victim", default="squeezenet1_1")
    ap.add_argument("--flooder", default="resnet50")
    ap.add_argument("--flooders", default="0,1,2,3")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--json", default=None)
    ap.add_argument("--device-config", default=None, help="the daemon's device config")
    ap.add_argument("--modes", default="on,off", help="preemption on, off or both")
    ap.add_argument("--priorities", default="normal,realtime")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    work = os.path.abspath(a.work or os.path.join(build, "bench-tenants"))
    os.makedirs(work, exist_ok=True)
    victim = prepare(build, work, a.victim)
    flooder = prepare(build, work, a.flooder)
    counts = [int(n) for n in a.flooders.split(",")]

    rows = []
    tmp = tempfile.mkdtemp(prefix="npu-bench-tenants-")
    try:
        for preemption in [m == "on" for m in a.modes.split(",")]:
            for priority in a.priorities.split(","):
                for n in counts:
                    socket = os.path.join(tmp, "npu0.sock")
                    daemon = Daemon(build, socket, preemption, a.device_config)
                    floods = []
                    victim_args = submit_args(build, socket, *victim, os.path.join(tmp, "victim"),
                                              priority, a.repeat, 2)
                    try:
                        # The solo baseline just before the flooders start: the same daemon and
                        # the same moment's machine load as the contended measurement.
                        solo, _ = measure(victim_args)
                        for i in range(n):
                            floods.append(subprocess.Popen(
                                submit_args(build, socket, *flooder, os.path.join(tmp, f"f{i}"),
                                            "normal", 1_000_000, 0),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                preexec_fn=die_with_parent))
                        if n:
                            time.sleep(3)  # every flooder loaded and submitting
                        med, p90 = measure(victim_args) if n else (solo, solo)
                    finally:
                        for f in floods:
                            f.kill()
                            f.wait()
                        daemon.stop()
                        if os.path.exists(socket):
                            os.unlink(socket)
                    rows.append({"preemption": preemption, "priority": priority, "flooders": n,
                                 "solo_ms": solo, "median_ms": med, "p90_ms": p90,
                                 "ratio": med / solo})
                    print(f"  {'on ' if preemption else 'off'} {priority:8} {n} flooder(s): "
                          f"median {med:.1f} ms (solo {solo:.1f} ms)", file=sys.stderr,
                          flush=True)
    finally:
        subprocess.run(["rm", "-rf", tmp])

    print(f"victim {a.victim} vs {a.flooder} flooders, through npu-daemon (--repeat {a.repeat}; "
          f"ratio = median / the victim's solo median measured just before the flooders start)")
    print(f"{'preemption':>10} {'victim':>9} {'flooders':>8} {'solo ms':>8} {'median ms':>10} "
          f"{'p90 ms':>9} {'ratio':>6}")
    for r in rows:
        print(f"{'on' if r['preemption'] else 'off':>10} {r['priority']:>9} {r['flooders']:>8} "
              f"{r['solo_ms']:>8.1f} {r['median_ms']:>10.1f} {r['p90_ms']:>9.1f} "
              f"{r['ratio']:>5.2f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"victim": a.victim, "flooder": a.flooder, "repeat": a.repeat,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

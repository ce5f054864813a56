#!/usr/bin/env bash
# abi_cost.sh BUILD_DIR — the cost of one ioctl by the path it takes, as a table: libnpu's
# in-process seam, libnpu's unix: seam to npu-daemon, and raw ioctl(2) on /dev/accel/accel0
# under npu-shim in-process and through the daemon. Median of 5 repetitions of each (Google
# Benchmark, real time). Needs a build with -DNPU_BUILD_BENCH=ON (`make bench-abi`).
set -euo pipefail
build="${1:-build-bench}"
bench="$build/bench/bench_abi"
shim="$build/tools/npu-shim/npu-shim"
daemon="$build/tools/npu-daemon/npu-daemon"
dir=$(mktemp -d)
trap 'kill $dpid 2>/dev/null || true; rm -rf "$dir"' EXIT
sock="$dir/npu.sock"
NPU_LOG_LEVEL=off "$daemon" --socket "$sock" 2>/dev/null &
dpid=$!
for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.05; done
args=(--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_format=csv)
{
  NPU_LOG_LEVEL=off NPU_BENCH_SOCKET="$sock" "$bench" "${args[@]}" 2>/dev/null
  NPU_LOG_LEVEL=off "$shim" --device emu: -- "$bench" "${args[@]}" --benchmark_filter=node 2>/dev/null
  NPU_LOG_LEVEL=off "$shim" --device "unix:$sock" -- "$bench" "${args[@]}" --benchmark_filter=node 2>/dev/null
} | /usr/bin/python3 -c '
import csv, sys
rows = {}
for r in csv.reader(sys.stdin):
    if len(r) < 4 or not r[0].endswith("_median"):
        continue
    path, call = r[0][:-len("_median")].split("/")[:2]
    unit = r[4] if len(r) > 4 else "ns"
    ns = float(r[2]) * {"ns": 1, "us": 1e3, "ms": 1e6}.get(unit, 1)
    rows.setdefault(path, {})[call] = ns
names = {"seam_emu": "libnpu seam, in-process (EmulatorKernel)",
         "seam_unix": "libnpu seam, unix: (UnixKernel to npu-daemon)",
         "node_shim_emu": "raw ioctl on /dev/accel/accel0, npu-shim in-process",
         "node_shim_daemon": "raw ioctl on /dev/accel/accel0, npu-shim through npu-daemon"}
base = rows.get("seam_emu", {})
bg = base.get("get_param", float("nan"))
bw = base.get("submit_wait", float("nan"))
print("| path | GET_PARAM us | vs seam | empty SUBMIT+WAIT us | vs seam | 2 jobs by host waits us | 2 jobs by a fence us |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for key in ["seam_emu", "node_shim_emu", "seam_unix", "node_shim_daemon"]:
    if key not in rows:
        continue
    g = rows[key].get("get_param", float("nan"))
    w = rows[key].get("submit_wait", float("nan"))
    h = rows[key].get("pair_by_host", float("nan"))
    f = rows[key].get("pair_by_fence", float("nan"))
    print(f"| {names[key]} | {g/1e3:.2f} | {g/bg:.1f}x | {w/1e3:.2f} | {w/bw:.1f}x | {h/1e3:.2f} | {f/1e3:.2f} |")
'

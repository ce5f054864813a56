#!/usr/bin/env bash
# Real-architecture check: torchvision ResNet-18, MobileNetV2 and SqueezeNet 1.1 (fixed random
# weights, non-trivial BatchNorm) exported to ONNX, run through npu-run (compile + submit on the
# emulated device) and compared with PyTorch. Not part of `make test`; see docs/realmodels.md.
#
#   tests/realmodels/run.sh [BUILD_DIR]          (default BUILD_DIR: build)
#
# Environment:
#   MODELS=resnet18,mobilenet_v2,squeezenet1_1   models to run
#   RTOL=1e-3 ATOL=1e-4                          tolerance (numpy.allclose rule)
#   SCALE_ATOL=0                                 plus this fraction of max |expected| in atol
#                                                (fp16/bf16 runs; also requires top-1 agreement)
#   THREADS=1                                    PyTorch CPU threads for the reference timing
#   OUTDIR=DIR                                   work in DIR and keep it (default: a temp dir,
#                                                removed at exit unless KEEP=1)
#   RUNNER=PROG                                  run PROG instead of BUILD_DIR's npu-run (same
#                                                flags; e.g. scripts/onnx_torch_ref.py to test
#                                                this harness without the stack)
#   EXPORT_FLAGS=--fold-bn                       extra flags for scripts/export_torchvision.py
#   RUN_FLAGS="--precision fp16"                 extra npu-run flags (compile options)
# Exit status: 0 all models match, 1 a model mismatched or failed, 2 set-up error.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PY=/usr/bin/python3
MODELS=${MODELS:-resnet18,mobilenet_v2,squeezenet1_1}
RTOL=${RTOL:-1e-3}
ATOL=${ATOL:-1e-4}
THREADS=${THREADS:-1}

die() { echo "realmodels: $*" >&2; exit 2; }

if [[ -n ${RUNNER:-} ]]; then
    NPU_RUN=$RUNNER
else
    NPU_RUN=
    for c in "$BUILD/tools/npu-run/npu-run" "$BUILD/bin/npu-run" "$BUILD/npu-run"; do
        [[ -x $c ]] && { NPU_RUN=$c; break; }
    done
    [[ -n $NPU_RUN ]] || die "no npu-run under $BUILD (looked in tools/npu-run/, bin/); build it first or set RUNNER"
fi
[[ -x $PY ]] || die "$PY not found (needs Debian's python3-torch, python3-torchvision, python3-onnx)"

if [[ -n ${OUTDIR:-} ]]; then
    mkdir -p "$OUTDIR" || die "cannot create $OUTDIR"
else
    OUTDIR=$(mktemp -d "${TMPDIR:-/tmp}/npu-realmodels.XXXXXX") || die "mktemp failed"
    [[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$OUTDIR"' EXIT
fi

echo "realmodels: exporting $MODELS to $OUTDIR (PyTorch threads: $THREADS)"
# shellcheck disable=SC2086
"$PY" "$ROOT/scripts/export_torchvision.py" "$OUTDIR" --models "$MODELS" --threads "$THREADS" \
    ${EXPORT_FLAGS:-} || die "export failed"

echo "realmodels: running with $NPU_RUN"
IFS=, read -r -a model_list <<< "$MODELS"
for m in "${model_list[@]}"; do
    d=$OUTDIR/$m
    rm -rf "$d/out"
    t0=$(date +%s%N)
    # shellcheck disable=SC2086  # RUN_FLAGS is a list of flags
    "$NPU_RUN" "$d/model.onnx" --input "input=$d/input.npy" --output-dir "$d/out" --stats \
        ${RUN_FLAGS:-} > "$d/run.stdout" 2> "$d/run.stderr"
    echo $? > "$d/run.rc"
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000 )) > "$d/run.wall_us"
    if [[ $(cat "$d/run.rc") == 0 && -f $d/out/output.npy ]]; then
        "$PY" "$ROOT/scripts/compare_outputs.py" "$d/out/output.npy" "$d/expected.npy" \
            --rtol "$RTOL" --atol "$ATOL" ${SCALE_ATOL:+--scale-atol "$SCALE_ATOL" --require-top1} \
            --json > "$d/compare.json" 2> "$d/compare.stderr"
    fi
    echo "  $m: exit $(cat "$d/run.rc"), $(( (t1 - t0) / 1000000 )) ms"
done

KEPT=1
[[ -n $(trap -p EXIT) ]] && KEPT=0
"$PY" - "$OUTDIR" "$MODELS" "$KEPT" <<'PYEOF'
import json, os, re, sys
outdir, models, kept = sys.argv[1], sys.argv[2].split(","), sys.argv[3] == "1"

def read(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default

rows, failed = [], []
for m in models:
    d = os.path.join(outdir, m)
    rc = int(read(os.path.join(d, "run.rc"), "1").strip() or 1)
    wall_ms = int(read(os.path.join(d, "run.wall_us"), "0").strip() or 0) / 1e3
    torch_ms = float(read(os.path.join(d, "torch_ms.txt"), "nan").strip() or "nan")
    out = read(os.path.join(d, "run.stdout"))
    # npu-submit --stats: "job ok: N cycles (...), host X ms" (sum over device segments).
    job = re.search(r"^job ok:.*$", out, re.M)
    src = job.group(0) if job else out
    mc = re.search(r"(\d+)\s+cycles", src)
    mh = re.search(r"host\s+([0-9.]+)\s*ms", src)
    cycles = mc.group(1) if mc else "-"
    host_ms = float(mh.group(1)) if mh else None
    status, absd, reld, top1 = "", "-", "-", "-"
    cmp_text = read(os.path.join(d, "compare.json")).strip()
    if rc != 0:
        err = (read(os.path.join(d, "run.stderr")).strip().splitlines() or ["(no stderr)"])[-1]
        status = f"FAIL exit {rc}: {err[:200]}"
    elif not cmp_text:
        err = read(os.path.join(d, "compare.stderr")).strip() or "no output.npy"
        status = f"FAIL: {err[:200]}"
    else:
        c = json.loads(cmp_text)
        if "error" in c:
            status = f"MISMATCH: {c['error']}"
        else:
            absd = f"{c['max_abs_diff']:.2e}"
            reld = f"{c['max_rel_diff']:.2e}"
            top1 = f"{c['top1_match']}/{c['top1_rows']}"
            status = "ok" if c["ok"] else f"MISMATCH ({c['out_of_tolerance']}/{c['elements']} out of tol)"
    if status != "ok":
        failed.append(m)
    # Speed ratio (BRIEF §4): submit -> emulate -> result vs PyTorch CPU. Use the wall time
    # npu-submit reports (excludes compile) when present, else the whole npu-run process.
    run_ms = host_ms if host_ms is not None else wall_ms
    ratio = f"{run_ms / torch_ms:.2f}x" if rc == 0 and torch_ms == torch_ms and torch_ms > 0 else "-"
    rows.append([m, absd, reld, top1, cycles, f"{wall_ms:.0f}",
                 f"{host_ms:.1f}" if host_ms is not None else "-", f"{torch_ms:.1f}", ratio, status])

hdr = ["model", "max abs diff", "max rel diff", "top-1", "device cycles", "npu-run wall ms",
       "submit ms", "torch ms", "ratio", "status"]
w = [max(len(str(r[i])) for r in rows + [hdr]) for i in range(len(hdr))]
line = lambda r: "| " + " | ".join(str(x).ljust(w[i]) for i, x in enumerate(r)) + " |"
print()
print(line(hdr))
print("|" + "|".join("-" * (x + 2) for x in w) + "|")
for r in rows:
    print(line(r))
print()
print("ratio = (npu-submit's reported wall time, else npu-run's whole wall time incl. compile) / "
      "PyTorch CPU median")
print(f"logs and outputs kept in {outdir}" if kept else
      "logs and outputs removed (KEEP=1 or OUTDIR=DIR keeps them)")
if failed:
    print(f"realmodels: FAILED: {', '.join(failed)}", file=sys.stderr)
    sys.exit(1)
print("realmodels: all models match")
PYEOF

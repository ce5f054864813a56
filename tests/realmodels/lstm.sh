#!/usr/bin/env bash
# Real-model check for the recurrent operators (issue 13): small sequence classifiers built from
# torch.nn.LSTM (2 layers, bidirectional, batch_first), torch.nn.GRU and torch.nn.RNN with fixed
# random weights, exported to ONNX at opset 14 by torch.onnx, run through npu-run (compile +
# submit on the emulated device; the recurrent layers run on the host, the classifier head on
# the device) and compared with PyTorch. Needs torch, so it is not part of ctest or `make test`.
#
#   tests/realmodels/lstm.sh [BUILD_DIR]      (default BUILD_DIR: build)
#
# Environment: RTOL=1e-3 ATOL=1e-4 (numpy.allclose rule), KEEP=1 keeps the temp dir.
# Exit status: 0 all models match, 1 a mismatch or a failed run, 2 set-up error.
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
PY=/usr/bin/python3
RTOL=${RTOL:-1e-3}
ATOL=${ATOL:-1e-4}

die() { echo "realmodels/lstm: $*" >&2; exit 2; }
NPU_RUN=$BUILD/tools/npu-run/npu-run
[[ -x $NPU_RUN ]] || die "no npu-run at $NPU_RUN; build it first"
"$PY" -c "import torch, onnx" 2>/dev/null || die "$PY lacks torch or onnx"

OUT=$(mktemp -d "${TMPDIR:-/tmp}/npu-lstm.XXXXXX") || die "mktemp failed"
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$OUT"' EXIT

"$PY" - "$OUT" <<'PYEOF' || die "export failed"
import os, sys
import numpy as np
import torch

out = sys.argv[1]
torch.manual_seed(0)


class Classifier(torch.nn.Module):
    """A recurrent encoder (last time step of every direction) and a linear head."""

    def __init__(self, kind, inp=16, hidden=32, layers=2, classes=5):
        super().__init__()
        self.rnn = getattr(torch.nn, kind)(inp, hidden, num_layers=layers, bidirectional=True,
                                           batch_first=True)
        self.head = torch.nn.Linear(2 * hidden, classes)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(torch.relu(y[:, -1, :]))


for kind in ("LSTM", "GRU", "RNN"):
    d = os.path.join(out, kind.lower())
    os.makedirs(d)
    m = Classifier(kind).eval()
    x = torch.randn(4, 12, 16)
    with torch.no_grad():
        want = m(x).numpy()
    torch.onnx.export(m, (x,), os.path.join(d, "model.onnx"), opset_version=14,
                      input_names=["input"], output_names=["output"])
    np.save(os.path.join(d, "input.npy"), x.numpy())
    np.save(os.path.join(d, "expected.npy"), want)
PYEOF

status=0
for m in lstm gru rnn; do
    d=$OUT/$m
    if ! "$NPU_RUN" "$d/model.onnx" --input "input=$d/input.npy" --output-dir "$d/out" \
        > "$d/run.log" 2>&1; then
        echo "  $m: FAIL: $(tail -1 "$d/run.log")"
        status=1
        continue
    fi
    if "$PY" "$ROOT/scripts/compare_outputs.py" "$d/out/output.npy" "$d/expected.npy" \
        --rtol "$RTOL" --atol "$ATOL" > "$d/compare.txt" 2>&1; then
        echo "  $m: ok ($(tr '\n' ' ' < "$d/compare.txt"))"
    else
        echo "  $m: MISMATCH ($(tr '\n' ' ' < "$d/compare.txt"))"
        status=1
    fi
done
[[ ${KEEP:-0} == 1 ]] && echo "realmodels/lstm: kept $OUT"
if [[ $status == 0 ]]; then echo "realmodels/lstm: all models match PyTorch"; fi
exit $status

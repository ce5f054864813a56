#!/bin/sh
# The shipped demo model (models/fashion_mnist), compiled as `make demo` compiles it, in fp32
# and in int8, runs on the emulator under the synchronization checker (npu-submit
# --racecheck) with no hazard: the compiler's output is race-free (docs/racecheck.md).
# usage: racecheck_demo.sh NPU_COMPILE NPU_SUBMIT SOURCE_DIR WORK_DIR
set -e
compile=$1
submit=$2
model=$3/models/fashion_mnist
work=$4/racecheck-demo
mkdir -p "$work"
"$compile" "$model/fashion_mnist.onnx" -o "$work/fashion_mnist.npub" > /dev/null
"$compile" "$model/fashion_mnist.onnx" -o "$work/fashion_mnist_int8.npub" --quantize int8 \
    --calibration "$model/calibration.npy" > /dev/null
for package in fashion_mnist fashion_mnist_int8; do
  # Exit status 3 (hazards) or anything else but 0 fails the test; so does an unchecked run.
  "$submit" "$work/$package.npub" --input image="$model/samples/batch8.npy" --racecheck \
      > "$work/$package.txt"
  grep -q '^racecheck: no hazards$' "$work/$package.txt"
  echo "$package: $(grep '^racecheck' "$work/$package.txt")"
done

#!/usr/bin/env bash
# Installs the Debian packages the build and tests need, only those missing. Idempotent;
# runs apt-get as root (or through sudo when available). The Python module (python/) is built
# for Debian's /usr/bin/python3 with these packages, not for another python3 on PATH.
set -euo pipefail
pkgs=(build-essential cmake pkg-config ccache libdrm-dev nlohmann-json3-dev libspdlog-dev
      libgtest-dev libgmock-dev libcli11-dev libbenchmark-dev libeigen3-dev
      libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata zlib1g-dev
      clang libclang-rt-14-dev
      pybind11-dev python3-dev python3-numpy python3-pytest python3-matplotlib)
# --realmodels: what the scripts outside the default test run need (docs/realmodels.md:
# torchvision exports; models/fashion_mnist/train.py and the int8 accuracy evaluation;
# examples/python/torchvision_precisions.py).
if [ "${1:-}" = "--realmodels" ]; then
  pkgs+=(python3-numpy python3-onnx python3-torch python3-torchvision dataset-fashion-mnist)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

// Helpers for codegen tests: host buffers mapped as DRAM through an emu::Mmu, random data,
// and run_layers(): emit ops into one command buffer, validate it, run it on emu::Device and
// check that the compiler's schedule replay equals the device's timeline exactly.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "npu/codegen/emit.h"
#include "npu/emu/device.h"
#include "npu/isa/schedule.h"

namespace npu::codegen::testing {

/// Host buffers standing in for BOs, each mapped at its own VA.
class Dram {
 public:
  template <typename T>
  TensorDesc tensor(uint8_t dtype, std::vector<uint32_t> dims, const std::vector<T>& init) {
    const uint64_t va = alloc(init.size() * sizeof(T));
    std::memcpy(bufs_.back().data(), init.data(), init.size() * sizeof(T));
    return TensorDesc::make(va, dtype, std::move(dims));
  }
  TensorDesc zeros(uint8_t dtype, std::vector<uint32_t> dims) {
    TensorDesc t = TensorDesc::make(0, dtype, std::move(dims));
    t.va = alloc(t.bytes());
    return t;
  }
  template <typename T>
  uint64_t put(const std::vector<T>& v) {
    const uint64_t va = alloc(v.size() * sizeof(T));
    std::memcpy(bufs_.back().data(), v.data(), v.size() * sizeof(T));
    return va;
  }
  template <typename T>
  std::vector<T> read(const TensorDesc& t) const {
    std::vector<T> out(t.elements());
    const std::byte* src = host(t.va);  // a missing buffer was already reported: fail, not crash
    if (src != nullptr) std::memcpy(out.data(), src, out.size() * sizeof(T));
    return out;
  }
  const emu::Mmu& mmu() const { return mmu_; }

 private:
  uint64_t alloc(uint64_t bytes);
  const std::byte* host(uint64_t va) const;
  std::vector<std::vector<std::byte>> bufs_;
  std::vector<uint64_t> vas_;
  emu::Mmu mmu_;
  uint64_t next_ = 0x1'0000'0000ull;
};

template <typename T>
std::vector<T> random_vec(size_t n, std::mt19937& rng, double lo, double hi) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<float> d{float(lo), float(hi)};
    for (auto& x : v) x = d(rng);
  } else {
    std::uniform_int_distribution<int> d{int(lo), int(hi)};
    for (auto& x : v) x = T(d(rng));
  }
  return v;
}

isa::DeviceConfig small_config(uint64_t sram = 256 * 1024);

/// Emits each op via `emitters` (a FENCE between consecutive ones), validates, runs on a
/// Device and compares the replay. Returns the layer reports (and the device cycles).
struct RunResult {
  std::vector<LayerReport> layers;
  uint64_t device_cycles = 0;
  uint64_t replay_cycles = 0;
  size_t num_cmds = 0;
};
using Emitter = std::function<Expected<LayerReport>(EmitContext&)>;
RunResult run_layers(const isa::DeviceConfig& cfg, Dram& dram,
                     const std::vector<Emitter>& emitters);

/// Prints the report table lines (to stdout) for a set of layers.
void print_table(const std::vector<LayerReport>& layers);

void expect_near(std::span<const float> got, std::span<const float> want, double rtol = 1e-4,
                 double atol = 1e-5);

}  // namespace npu::codegen::testing

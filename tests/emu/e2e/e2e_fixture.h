// End-to-end harness: a command buffer DMAs an input blob into SRAM, one compute engine runs
// the commands under test, DMA_OUT stores the result; the same validated program also runs on
// the reference interpreter and the two outputs are compared.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "npu/emu/device.h"
#include "npu/isa/builder.h"
#include "npu/isa/validate.h"
#include "npu/ref/interp.h"

namespace npu::e2e {

/// The input blob, loaded at SRAM offset 0; add() returns an operand's SRAM address.
struct Blob {
  std::vector<std::byte> bytes;
  template <typename T>
  uint32_t add(const std::vector<T>& v) {
    const uint32_t at = static_cast<uint32_t>((bytes.size() + 63) / 64 * 64);
    bytes.resize(at + v.size() * sizeof(T));
    std::memcpy(bytes.data() + at, v.data(), v.size() * sizeof(T));
    return at;
  }
  uint32_t end() const { return static_cast<uint32_t>((bytes.size() + 63) / 64 * 64); }
};

struct Outcome {
  std::vector<std::byte> device, reference;
  uint64_t cycles = 0;
};

/// Runs `compute` (commands on `engine`) between the load of `in` and the store of
/// [out_addr, out_addr + out_size).
inline Outcome run_case(const Blob& in, uint32_t out_addr, uint32_t out_size, uint8_t engine,
                        const std::function<void(isa::CommandBufferBuilder&)>& compute) {
  isa::DeviceConfig cfg;
  Outcome o;
  std::vector<std::byte> src = in.bytes;
  src.resize((src.size() + 4095) / 4096 * 4096 + 4096);
  std::vector<std::byte> dst(out_size);
  const uint64_t src_va = 0x1'0000'0000ull, dst_va = 0x2'0000'0000ull;

  isa::CommandBufferBuilder b;
  b.dma_load({.dram = src_va, .sram = 0, .size = {static_cast<uint32_t>(in.bytes.size()), 1, 1}});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(engine, 0);
  compute(b);
  b.sem_signal(engine, 1);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  b.dma_store({.dram = dst_va, .sram = out_addr, .size = {out_size, 1, 1}});
  auto bytes = b.finish();
  auto prog = isa::validate(bytes, cfg);
  EXPECT_TRUE(prog) << prog.error().message;
  if (!prog) return o;

  // Device.
  emu::Device dev(cfg);
  emu::Mmu mmu;
  EXPECT_TRUE(mmu.map({src_va, src.size(), src.data(), isa::kRead}));
  EXPECT_TRUE(mmu.map({dst_va, dst.size(), dst.data(), isa::kWrite}));
  emu::JobResult r = dev.run(*prog, mmu);
  EXPECT_EQ(r.status, DRM_NPU_JOB_OK)
      << "fault kind " << r.fault.kind << " at command " << r.fault.cmd_index;
  o.device = dst;
  o.cycles = r.profile.cycles;

  // Reference.
  std::vector<std::byte> sram(cfg.sram_size), rsrc = src, rdst(out_size);
  ref::FlatDram dram;
  EXPECT_TRUE(dram.map(src_va, rsrc));
  EXPECT_TRUE(dram.map(dst_va, rdst));
  auto rr = ref::run_program(*prog, sram, dram);
  EXPECT_TRUE(rr) << rr.error().message;
  o.reference = rdst;
  return o;
}

/// Guards against a comparison that cannot fail: an all-zero result means nothing was computed.
inline void expect_nontrivial(const Outcome& o) {
  bool any = false;
  for (std::byte b : o.reference) any = any || b != std::byte{0};
  EXPECT_TRUE(any) << "reference output is all zeros: the case checks nothing";
}

/// Bit-exact comparison.
inline void expect_exact(const Outcome& o) {
  ASSERT_EQ(o.device.size(), o.reference.size());
  expect_nontrivial(o);
  size_t mismatches = 0, first = 0;
  for (size_t i = 0; i < o.device.size(); ++i)
    if (o.device[i] != o.reference[i] && mismatches++ == 0) first = i;
  EXPECT_EQ(mismatches, 0u) << "first differing byte " << first << ": device "
                            << int(o.device[first]) << " reference " << int(o.reference[first]);
}

/// fp32 comparison: |d - r| <= atol + rtol * |r| (NaN must match NaN).
inline void expect_close(const Outcome& o, float rtol = 1e-5f, float atol = 1e-5f) {
  ASSERT_EQ(o.device.size(), o.reference.size());
  expect_nontrivial(o);
  const size_t n = o.device.size() / 4;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    float d, r;
    std::memcpy(&d, o.device.data() + 4 * i, 4);
    std::memcpy(&r, o.reference.data() + 4 * i, 4);
    const bool ok = (std::isnan(d) && std::isnan(r)) || d == r ||
                    std::fabs(d - r) <= atol + rtol * std::fabs(r);
    if (!ok && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": device " << d << " reference " << r;
  }
  EXPECT_EQ(bad, 0u);
}

template <typename T>
std::vector<T> random_ints(size_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

inline std::vector<float> random_floats(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace npu::e2e

// The DMA kernels (emu/kernels/dma.cpp) against the reference interpreter's DMA
// (ref/src/exec_dma.cpp) on random boxes: element sizes, strides that make rows contiguous on
// one side, both or neither (whole planes copied at once, rows of 16/32/64 bytes, element
// gathers), padding on every axis, converting rows. Every byte of SRAM and DRAM must match.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "npu/emu/kernels.h"
#include "npu/ref/interp.h"
#include "npu_isa.h"

namespace npu::emu {
namespace {

constexpr uint64_t kDramVa = 0x1'0000'0000ull;
constexpr size_t kBytes = 32 * 1024;  // more than any box below spans

void randomize(std::vector<std::byte>& b, std::mt19937_64& rng) {
  for (size_t i = 0; i < b.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(b.data() + i, &v, 8);
  }
}

npu_cmd random_dma(std::mt19937_64& rng, bool load) {
  auto pick = [&](uint64_t n) { return static_cast<uint32_t>(rng() % n); };
  npu_cmd c{};
  c.hdr.opcode = load ? NPU_OP_DMA_LOAD : NPU_OP_DMA_STORE;
  c.hdr.engine = load ? NPU_ENGINE_DMA_IN : NPU_ENGINE_DMA_OUT;
  npu_cmd_dma& d = c.dma;
  const bool convert = pick(5) == 0;
  if (convert) {  // fp32 in DRAM, a half type in SRAM, or the other way round
    const uint8_t half = pick(2) ? NPU_DTYPE_FP16 : NPU_DTYPE_BF16;
    const bool wide_dram = pick(2) != 0;
    d.dram_dtype = wide_dram ? NPU_DTYPE_FP32 : half;
    d.sram_dtype = wide_dram ? half : NPU_DTYPE_FP32;
    d.elem_size = wide_dram ? 2 : 4;
  } else {
    d.elem_size = uint32_t{1} << pick(3);
  }
  const uint32_t es = d.elem_size;
  const uint32_t des = convert ? (d.dram_dtype == NPU_DTYPE_FP32 ? 4 : 2) : es;
  // Row lengths that hit the fixed-size copies (16/32/64 bytes) as often as others.
  const uint32_t sizes_x[] = {1, 3, 16 / es, 32 / es, 64 / es, 5, 24};
  d.size[0] = std::max<uint32_t>(1, sizes_x[pick(7)]);
  d.size[1] = 1 + pick(9);
  d.size[2] = 1 + pick(4);
  if (load && pick(2)) {
    for (int a = 0; a < 3; ++a) {
      d.pad_before[a] = static_cast<uint16_t>(pick(3));
      d.pad_after[a] = static_cast<uint16_t>(pick(3));
    }
    d.pad_value = static_cast<uint32_t>(rng());
  }
  // DRAM strides: contiguous elements or gathered; rows back to back or apart.
  d.dram_stride[0] = pick(3) ? des : des * (1 + pick(3));
  const uint32_t dram_row = d.dram_stride[0] * d.size[0];
  d.dram_stride[1] = pick(2) ? dram_row : dram_row + des * pick(5);
  d.dram_stride[2] = d.dram_stride[1] * d.size[1] + des * pick(3);
  // SRAM rows (with padding) back to back or apart.
  const uint32_t px = d.pad_before[0] + d.size[0] + d.pad_after[0];
  const uint32_t py = d.pad_before[1] + d.size[1] + d.pad_after[1];
  d.sram_stride[0] = pick(2) ? px * es : px * es + es * pick(5);
  d.sram_stride[1] = d.sram_stride[0] * py + es * pick(3);
  d.sram_addr = es * pick(256);
  d.dram_addr = kDramVa + des * pick(256);
  return c;
}

TEST(KernelsDma, MatchesTheReferenceOnRandomBoxes) {
  std::mt19937_64 rng(27);
  size_t compared = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const npu_cmd c = random_dma(rng, iter % 2 == 0);
    std::vector<std::byte> sram_a(kBytes), dram_a(kBytes);
    randomize(sram_a, rng);
    randomize(dram_a, rng);
    std::vector<std::byte> sram_b = sram_a, dram_b = dram_a;

    ref::FlatDram flat;
    ASSERT_TRUE(flat.map(kDramVa, dram_b).has_value());
    if (!ref::execute(c, sram_b, flat)) continue;  // a box the reference refuses
    run_command(c, sram_a, dram_a.data() + (c.dma.dram_addr - kDramVa), nullptr);
    ASSERT_EQ(sram_a, sram_b) << "iteration " << iter;
    ASSERT_EQ(dram_a, dram_b) << "iteration " << iter;
    ++compared;
  }
  EXPECT_GT(compared, 2500u) << compared << " of 3000 compared";
}

}  // namespace
}  // namespace npu::emu

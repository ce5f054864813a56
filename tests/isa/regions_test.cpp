// command_regions: byte ranges per opcode, and overflow detection.
#include <gtest/gtest.h>

#include <vector>

#include "npu/isa/builder.h"
#include "npu/isa/regions.h"

namespace npu::isa {
namespace {

std::vector<Region> regions_of(const npu_cmd& c) {
  std::vector<Region> out;
  auto r = command_regions(c, out);
  EXPECT_TRUE(r) << r.error().message;
  return out;
}

void expect_region(const Region& r, Space space, uint8_t access, uint64_t begin, uint64_t end,
                   std::string_view field) {
  EXPECT_EQ(r.space, space) << r.field;
  EXPECT_EQ(r.access, access) << r.field;
  EXPECT_EQ(r.begin, begin) << r.field;
  EXPECT_EQ(r.end, end) << r.field;
  EXPECT_EQ(std::string_view(r.field), field);
}

TEST(Regions, ControlCommandsHaveNone) {
  CommandBufferBuilder b;
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_MATRIX, 0);
  b.marker(NPU_ENGINE_VECTOR, 7);
  b.nop();
  b.fence(true, 3);
  b.end();
  for (const auto& c : b.commands()) EXPECT_TRUE(regions_of(c).empty());
}

TEST(Regions, DmaLoadPaddedBox) {
  CommandBufferBuilder b;
  // 3 x 2 x 1 box of 2-byte elements, DRAM rows 100 bytes apart, padded by 1 in x and y.
  b.dma_load({.dram = 0x10000,
              .sram = 256,
              .elem_size = 2,
              .size = {3, 2, 1},
              .dram_stride = {{2, 100, 0}},
              .pad_before = {1, 1, 0},
              .pad_after = {1, 1, 0}});
  const auto r = regions_of(b.commands()[0]);
  ASSERT_EQ(r.size(), 2u);
  // DRAM: 0x10000 + (3-1)*2 + (2-1)*100 + 2.
  expect_region(r[0], Space::Dram, kRead, 0x10000, 0x10000 + 4 + 100 + 2, "dram_addr");
  // SRAM: padded box 5 x 4, contiguous rows of 10 bytes: 256 + 3*10 + 5*2.
  expect_region(r[1], Space::Sram, kWrite, 256, 256 + 30 + 10, "sram_addr");
}

TEST(Regions, DmaStoreReverse) {
  CommandBufferBuilder b;
  b.dma_store(
      {.dram = 0x2000, .sram = 64, .elem_size = 4, .size = {8, 4, 2}, .sram_stride = {{64, 512}}});
  const auto r = regions_of(b.commands()[0]);
  ASSERT_EQ(r.size(), 2u);
  expect_region(r[0], Space::Sram, kRead, 64, 64 + 3 * 64 + 512 + 32, "sram_addr");
  expect_region(r[1], Space::Dram, kWrite, 0x2000, 0x2000 + 8 * 4 * 2 * 4, "dram_addr");
}

TEST(Regions, DmaBroadcastStrideZero) {
  CommandBufferBuilder b;
  b.dma_load({.dram = 0x1000, .elem_size = 4, .size = {16, 1, 1}, .dram_stride = {{0, 0, 0}}});
  const auto r = regions_of(b.commands()[0]);
  expect_region(r[0], Space::Dram, kRead, 0x1000, 0x1004, "dram_addr");
  expect_region(r[1], Space::Sram, kWrite, 0, 64, "sram_addr");
}

// A DMA's DRAM side that is rows at one pitch says so (a slice of 16 fp32 channels of a
// 64-channel tensor, 3 x 2 pixels); a box whose planes do not continue its rows, a contiguous
// one and a strided x do not.
TEST(Regions, DmaDramRowsAtOnePitch) {
  CommandBufferBuilder b;
  b.dma_store({.dram = 0x4000,
               .elem_size = 4,
               .size = {16, 3, 2},
               .dram_stride = {{4, 256, 768}},
               .sram_stride = {{64, 192}}});
  b.dma_store({.dram = 0x4000,
               .elem_size = 4,
               .size = {16, 3, 2},
               .dram_stride = {{4, 256, 1024}},
               .sram_stride = {{64, 192}}});
  b.dma_load({.dram = 0x4000, .elem_size = 4, .size = {64, 3, 1}});
  b.dma_load({.dram = 0x4000, .elem_size = 4, .size = {16, 3, 1}, .dram_stride = {{8, 256, 0}}});
  const auto rows = regions_of(b.commands()[0]);
  expect_region(rows[1], Space::Dram, kWrite, 0x4000, 0x4000 + 5 * 256 + 64, "dram_addr");
  EXPECT_EQ(rows[1].pitch, 256u);
  EXPECT_EQ(rows[1].width, 64u);
  EXPECT_EQ(rows[0].pitch, 0u);  // the SRAM side: its bounding range
  for (size_t i = 1; i < 4; ++i) {
    const auto r = regions_of(b.commands()[i]);
    const Region& dram = r[0].space == Space::Dram ? r[0] : r[1];
    EXPECT_EQ(dram.pitch, 0u) << i;
  }
}

TEST(Regions, DmaDramOverflow) {
  CommandBufferBuilder b;
  b.dma_load({.dram = UINT64_MAX - 8, .elem_size = 4, .size = {4, 1, 1}});
  std::vector<Region> out;
  auto r = command_regions(b.commands()[0], out);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_NE(r.error().message.find("field dram_addr"), std::string::npos) << r.error().message;
}

TEST(Regions, Conv2dInt8) {
  CommandBufferBuilder b;
  b.conv2d({.in_addr = 0,
            .w_addr = 1000,
            .out_addr = 5000,
            .chan_addr = 4000,
            .in_h = 8,
            .in_w = 8,
            .in_c = 4,
            .out_c = 6,
            .k_h = 3,
            .k_w = 3,
            .groups = 2,
            .pad_top = 1,
            .pad_left = 1,
            .pad_bottom = 1,
            .pad_right = 1,
            .out_dtype = NPU_DTYPE_INT32});
  const auto r = regions_of(b.commands()[0]);
  ASSERT_EQ(r.size(), 4u);
  expect_region(r[0], Space::Sram, kRead, 0, 8 * 8 * 4, "in_addr");
  expect_region(r[1], Space::Sram, kRead, 1000, 1000 + 6 * 3 * 3 * 2, "w_addr");
  expect_region(r[2], Space::Sram, kRead, 4000, 4000 + 16 * 6, "chan_addr");
  expect_region(r[3], Space::Sram, kWrite, 5000, 5000 + 8 * 8 * 6 * 4, "out_addr");
}

// The float modes read `float bias[out_c]` at chan_addr, and only with the BIAS flag: fp32, and
// ISA 1.1's fp16/bf16 (docs/isa.md, CONV2D: "float modes with BIAS: 4*out_c"). Reading the half
// modes' as 16-byte integer channel params made a half convolution touch the SRAM after its bias:
// a compiler's input slot, which on the device's host lanes made every convolution wait for the
// loads into that slot.
TEST(Regions, FloatModesReadAFloatBiasOnlyWithFlag) {
  for (const uint8_t dt :
       {uint8_t{NPU_DTYPE_FP32}, uint8_t{NPU_DTYPE_FP16}, uint8_t{NPU_DTYPE_BF16}}) {
    SCOPED_TRACE(int{dt});
    CommandBufferBuilder b;
    Conv2dArgs a{.in_h = 4,
                 .in_w = 4,
                 .in_c = 2,
                 .out_c = 3,
                 .in_dtype = dt,
                 .w_dtype = dt,
                 .out_dtype = dt};
    a.w_addr = 128;
    a.out_addr = 256;
    b.conv2d(a);
    EXPECT_EQ(regions_of(b.commands()[0]).size(), 3u);
    a.bias = true;
    a.chan_addr = 1024;
    b.conv2d(a);
    const auto r = regions_of(b.commands()[1]);
    ASSERT_EQ(r.size(), 4u);
    expect_region(r[2], Space::Sram, kRead, 1024, 1024 + 3 * 4, "chan_addr");
    b.matmul({.b_addr = 512,
              .out_addr = 2048,
              .chan_addr = 4096,
              .m = 2,
              .k = 3,
              .n = 5,
              .a_dtype = dt,
              .b_dtype = dt,
              .out_dtype = dt,
              .bias = true});
    const auto m = regions_of(b.commands()[2]);
    ASSERT_EQ(m.size(), 4u);
    expect_region(m[2], Space::Sram, kRead, 4096, 4096 + 5 * 4, "chan_addr");
  }
}

TEST(Regions, MatmulBatchStrides) {
  CommandBufferBuilder b;
  b.matmul({.a_addr = 0,
            .b_addr = 10000,
            .out_addr = 20000,
            .chan_addr = 30000,
            .m = 4,
            .k = 8,
            .n = 5,
            .batch = 3,
            .b_batch_stride = 0,  // broadcast B
            .out_dtype = NPU_DTYPE_INT32,
            .transpose_b = true});
  const auto r = regions_of(b.commands()[0]);
  ASSERT_EQ(r.size(), 4u);
  expect_region(r[0], Space::Sram, kRead, 0, 2 * 32 + 32, "a_addr");
  expect_region(r[1], Space::Sram, kRead, 10000, 10000 + 40, "b_addr");
  expect_region(r[2], Space::Sram, kRead, 30000, 30000 + 16 * 5, "chan_addr");
  expect_region(r[3], Space::Sram, kWrite, 20000, 20000 + (2 * 20 + 20) * 4, "out_addr");
}

TEST(Regions, MatmulStrideOverflowNamesField) {
  CommandBufferBuilder b;
  b.matmul({.m = 1,
            .k = 1,
            .n = 1,
            .batch = UINT32_MAX,
            .a_batch_stride = UINT32_MAX,
            .a_dtype = NPU_DTYPE_FP32,
            .b_dtype = NPU_DTYPE_FP32,
            .out_dtype = NPU_DTYPE_FP32});
  std::vector<Region> out;
  auto r = command_regions(b.commands()[0], out);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "field a_batch_stride: byte arithmetic overflows 64 bits");
}

TEST(Regions, EltwiseBroadcastBoundingRange) {
  CommandBufferBuilder b;
  b.eltwise({.op = NPU_ELTWISE_MUL,
             .dtype = NPU_DTYPE_FP32,
             .shape = {1, 2, 3, 4},
             .a_addr = 0,
             .b_addr = 1000,
             .b_stride = {{0, 0, 0, 1}},
             .out_addr = 2000});
  const auto r = regions_of(b.commands()[0]);
  ASSERT_EQ(r.size(), 3u);
  expect_region(r[0], Space::Sram, kRead, 0, 24 * 4, "a.addr");
  expect_region(r[1], Space::Sram, kRead, 1000, 1000 + 4 * 4, "b.addr");
  expect_region(r[2], Space::Sram, kWrite, 2000, 2000 + 24 * 4, "out.addr");
}

TEST(Regions, ActivationStrided) {
  CommandBufferBuilder b;
  // Every other element of a 10-element int8 row.
  b.activation({.func = NPU_ACT_RELU,
                .dtype = NPU_DTYPE_INT8,
                .shape = {1, 1, 1, 10},
                .in_addr = 100,
                .in_stride = {{0, 0, 0, 2}},
                .out_addr = 200});
  const auto r = regions_of(b.commands()[0]);
  ASSERT_EQ(r.size(), 2u);
  expect_region(r[0], Space::Sram, kRead, 100, 100 + 9 * 2 + 1, "in.addr");
  expect_region(r[1], Space::Sram, kWrite, 200, 210, "out.addr");
}

TEST(Regions, VectorOps) {
  CommandBufferBuilder b;
  b.pool({.kind = NPU_POOL_AVG,
          .dtype = NPU_DTYPE_UINT8,
          .in_addr = 0,
          .out_addr = 1000,
          .in_h = 4,
          .in_w = 4,
          .channels = 3,
          .k_h = 2,
          .k_w = 2,
          .stride_h = 2,
          .stride_w = 2});
  b.softmax({.in_addr = 0, .out_addr = 512, .rows = 2, .len = 10});
  b.scale_shift({.in_addr = 0,
                 .out_addr = 100,
                 .scale_addr = 200,
                 .shift_addr = 300,
                 .outer = 2,
                 .channels = 3});
  b.quantize(
      {.in_addr = 0, .out_addr = 400, .count = 10, .channels = 2, .inner = 5, .params_addr = 500});
  b.dequantize({.in_addr = 0, .out_addr = 400, .count = 10, .dtype = NPU_DTYPE_INT32});
  b.requantize({.in_addr = 0, .out_addr = 400, .count = 10});
  b.transpose({.in_addr = 0,
               .out_addr = 1000,
               .in_shape = {1, 2, 3, 4},
               .perm = {0, 3, 1, 2},
               .elem_size = 2});
  b.reduce(
      {.kind = NPU_REDUCE_MEAN, .in_addr = 0, .out_addr = 1000, .outer = 2, .len = 3, .inner = 4});
  auto r = regions_of(b.commands()[0]);
  ASSERT_EQ(r.size(), 2u);
  expect_region(r[0], Space::Sram, kRead, 0, 48, "in_addr");
  expect_region(r[1], Space::Sram, kWrite, 1000, 1012, "out_addr");
  r = regions_of(b.commands()[1]);
  expect_region(r[1], Space::Sram, kWrite, 512, 512 + 80, "out_addr");
  r = regions_of(b.commands()[2]);
  ASSERT_EQ(r.size(), 4u);
  expect_region(r[1], Space::Sram, kRead, 200, 212, "scale_addr");
  expect_region(r[2], Space::Sram, kRead, 300, 312, "shift_addr");
  expect_region(r[3], Space::Sram, kWrite, 100, 124, "out_addr");
  r = regions_of(b.commands()[3]);
  ASSERT_EQ(r.size(), 3u);
  expect_region(r[0], Space::Sram, kRead, 0, 40, "in_addr");
  expect_region(r[1], Space::Sram, kRead, 500, 516, "params_addr");
  expect_region(r[2], Space::Sram, kWrite, 400, 410, "out_addr");
  r = regions_of(b.commands()[4]);
  ASSERT_EQ(r.size(), 2u);  // channels == 1: no params
  expect_region(r[0], Space::Sram, kRead, 0, 40, "in_addr");
  expect_region(r[1], Space::Sram, kWrite, 400, 440, "out_addr");
  r = regions_of(b.commands()[5]);
  expect_region(r[0], Space::Sram, kRead, 0, 40, "in_addr");
  expect_region(r[1], Space::Sram, kWrite, 400, 410, "out_addr");
  r = regions_of(b.commands()[6]);
  expect_region(r[0], Space::Sram, kRead, 0, 48, "in_addr");
  expect_region(r[1], Space::Sram, kWrite, 1000, 1048, "out_addr");
  r = regions_of(b.commands()[7]);
  expect_region(r[0], Space::Sram, kRead, 0, 96, "in_addr");
  expect_region(r[1], Space::Sram, kWrite, 1000, 1032, "out_addr");
}

TEST(Regions, MomentsReadsOnceWritesBothOutputs) {
  CommandBufferBuilder b;
  b.moments({.in_addr = 64, .mean_addr = 1000, .sq_addr = 2000, .outer = 2, .len = 3, .inner = 4});
  const auto r = regions_of(b.commands()[0]);
  ASSERT_EQ(r.size(), 3u);
  expect_region(r[0], Space::Sram, kRead, 64, 64 + 2 * 3 * 4 * 4, "in_addr");
  expect_region(r[1], Space::Sram, kWrite, 1000, 1000 + 2 * 4 * 4, "mean_addr");
  expect_region(r[2], Space::Sram, kWrite, 2000, 2000 + 2 * 4 * 4, "sq_addr");
}

TEST(Regions, UnknownOpcodeFails) {
  npu_cmd c{};
  c.hdr.opcode = 0x7f;
  std::vector<Region> out;
  EXPECT_FALSE(command_regions(c, out));
}

}  // namespace
}  // namespace npu::isa

// command_cost: hand-computed cases for each engine class and monotonic sanity checks.
#include <gtest/gtest.h>

#include "npu/isa/builder.h"
#include "npu/isa/timing.h"

namespace npu::isa {
namespace {

CommandCost cost_of(CommandBufferBuilder& b, const DeviceConfig& cfg = {}) {
  return command_cost(b.commands().back(), cfg);
}

TEST(Timing, DmaContiguous) {
  CommandBufferBuilder b;
  b.dma_load({.dram = 0x1000, .sram = 0, .elem_size = 1, .size = {64, 8, 1}});
  const auto c = cost_of(b);
  EXPECT_EQ(c.cycles, 64u + 8 * 2);  // latency + rows * ceil(64 / 32)
  EXPECT_EQ(c.bytes, 512u);
  b.dma_load({.elem_size = 1, .size = {100, 3, 1}});
  EXPECT_EQ(cost_of(b).cycles, 64u + 3 * 4);  // ceil(100 / 32) = 4 per row
}

TEST(Timing, DmaPaddingAndStrided) {
  CommandBufferBuilder b;
  b.dma_load({.elem_size = 1, .size = {64, 8, 1}, .pad_before = {0, 1, 0}, .pad_after = {0, 1, 0}});
  auto c = cost_of(b);
  EXPECT_EQ(c.cycles, 64u + 16 + 128 / 32);  // 128 padding bytes at 32 B/cycle
  EXPECT_EQ(c.bytes, 512u);                  // padding excluded
  // x stride != elem_size: every element is its own run.
  b.dma_store({.elem_size = 4, .size = {10, 2, 1}, .dram_stride = {{8, 80, 0}}});
  c = cost_of(b);
  EXPECT_EQ(c.cycles, 64u + 20 * 1);
  EXPECT_EQ(c.bytes, 80u);
}

TEST(Timing, Conv2d) {
  CommandBufferBuilder b;
  b.conv2d({.in_h = 8,
            .in_w = 8,
            .in_c = 8,
            .out_c = 16,
            .k_h = 3,
            .k_w = 3,
            .pad_top = 1,
            .pad_left = 1,
            .pad_bottom = 1,
            .pad_right = 1});
  auto c = cost_of(b);
  // Kg = 72, OCg = 16: 32 + 1 * ceil(16/32) * ceil(72/32) * 64.
  EXPECT_EQ(c.cycles, 32u + 1 * 1 * 3 * 64);
  EXPECT_EQ(c.macs, 64u * 16 * 72);
  // Depthwise: 16 groups of Kg = 9, OCg = 1.
  b.conv2d({.in_h = 8,
            .in_w = 8,
            .in_c = 16,
            .out_c = 16,
            .k_h = 3,
            .k_w = 3,
            .groups = 16,
            .pad_top = 1,
            .pad_left = 1,
            .pad_bottom = 1,
            .pad_right = 1});
  c = cost_of(b);
  EXPECT_EQ(c.cycles, 32u + 16 * 64);
  EXPECT_EQ(c.macs, 64u * 16 * 9);
}

TEST(Timing, MatmulFp32UsesFp32Array) {
  CommandBufferBuilder b;
  b.matmul({.m = 10,
            .k = 40,
            .n = 20,
            .batch = 2,
            .a_dtype = NPU_DTYPE_FP32,
            .b_dtype = NPU_DTYPE_FP32,
            .out_dtype = NPU_DTYPE_FP32});
  const auto c = cost_of(b);
  EXPECT_EQ(c.cycles, 32u + 2 * 2 * 3 * 10);  // 16x16 array: ceil(20/16)=2, ceil(40/16)=3
  EXPECT_EQ(c.macs, 2u * 10 * 20 * 40);
}

TEST(Timing, Vector) {
  CommandBufferBuilder b;
  b.eltwise({.op = NPU_ELTWISE_ADD, .dtype = NPU_DTYPE_FP32, .shape = {1, 1, 1, 100}});
  EXPECT_EQ(cost_of(b).cycles, 8u + 7);
  EXPECT_EQ(cost_of(b).elements, 100u);
  b.eltwise({.op = NPU_ELTWISE_DIV, .dtype = NPU_DTYPE_FP32, .shape = {1, 1, 1, 100}});
  EXPECT_EQ(cost_of(b).cycles, 8u + 7 * 4);
  b.eltwise({.op = NPU_ELTWISE_ADD, .dtype = NPU_DTYPE_INT8, .shape = {1, 1, 1, 100}});
  EXPECT_EQ(cost_of(b).cycles, 8u + 2);
  b.activation({.func = NPU_ACT_SIGMOID, .shape = {1, 1, 8, 8}});
  EXPECT_EQ(cost_of(b).cycles, 8u + 4 * 4);
  b.pool({.dtype = NPU_DTYPE_INT8,
          .in_h = 8,
          .in_w = 8,
          .channels = 16,
          .k_h = 3,
          .k_w = 3,
          .stride_h = 2,
          .stride_w = 2,
          .pad_top = 1,
          .pad_left = 1});
  EXPECT_EQ(cost_of(b).cycles, 8u + 256 * 9 / 64);
  EXPECT_EQ(cost_of(b).elements, 256u);
  b.softmax({.rows = 4, .len = 10});
  EXPECT_EQ(cost_of(b).cycles, 8u + 3 * (2 + 4));
  b.reduce({.outer = 2, .len = 3, .inner = 4});
  EXPECT_EQ(cost_of(b).cycles, 8u + 2);
  EXPECT_EQ(cost_of(b).elements, 8u);
  // Two accumulations per input element, two [outer][inner] outputs.
  b.moments({.outer = 2, .len = 3, .inner = 4});
  EXPECT_EQ(cost_of(b).cycles, 8u + 2 * 2);
  EXPECT_EQ(cost_of(b).elements, 16u);
  b.quantize({.count = 100});
  EXPECT_EQ(cost_of(b).cycles, 8u + 7);
  b.requantize({.count = 128});
  EXPECT_EQ(cost_of(b).cycles, 8u + 8);
  b.transpose({.in_shape = {1, 2, 8, 8}, .elem_size = 1});
  EXPECT_EQ(cost_of(b).cycles, 8u + 2);
}

TEST(Timing, Control) {
  CommandBufferBuilder b;
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  EXPECT_EQ(cost_of(b).cycles, 1u);
  b.marker(NPU_ENGINE_CP, 0);
  EXPECT_EQ(cost_of(b).cycles, 1u);
  b.nop(NPU_ENGINE_VECTOR);
  EXPECT_EQ(cost_of(b).cycles, 1u);
  b.sem_wait(NPU_ENGINE_VECTOR, 0);
  EXPECT_EQ(cost_of(b).cycles, 0u);
  b.fence();
  EXPECT_EQ(cost_of(b).cycles, 0u);
  b.end();
  EXPECT_EQ(cost_of(b).cycles, 0u);
}

TEST(Timing, MonotonicInWorkAndHardware) {
  DeviceConfig small, big;
  big.dma.bytes_per_cycle = 64;
  big.matrix.int8_rows = big.matrix.int8_cols = 64;
  big.vector.fp32_lanes = 64;
  uint64_t prev_conv = 0, prev_dma = 0, prev_vec = 0;
  for (uint16_t n = 1; n <= 64; n *= 2) {
    CommandBufferBuilder b;
    b.conv2d({.in_h = n,
              .in_w = n,
              .in_c = 16,
              .out_c = 32,
              .k_h = 3,
              .k_w = 3,
              .pad_top = 1,
              .pad_left = 1,
              .pad_bottom = 1,
              .pad_right = 1});
    const auto conv = command_cost(b.commands().back(), small);
    EXPECT_GT(conv.cycles, prev_conv);
    EXPECT_LE(command_cost(b.commands().back(), big).cycles, conv.cycles);
    prev_conv = conv.cycles;
    b.dma_load({.elem_size = 4, .size = {n, n, 4}});
    const auto dma = command_cost(b.commands().back(), small);
    EXPECT_GT(dma.cycles, prev_dma);
    EXPECT_LE(command_cost(b.commands().back(), big).cycles, dma.cycles);
    prev_dma = dma.cycles;
    b.activation({.func = NPU_ACT_TANH, .shape = {1, 1, n, 64}});
    const auto vec = command_cost(b.commands().back(), small);
    EXPECT_GT(vec.cycles, prev_vec);
    EXPECT_LE(command_cost(b.commands().back(), big).cycles, vec.cycles);
    prev_vec = vec.cycles;
  }
}

}  // namespace
}  // namespace npu::isa

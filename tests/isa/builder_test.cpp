// CommandBufferBuilder: defaults, header, END handling, and that its output validates.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "npu/isa/builder.h"
#include "npu/isa/validate.h"

namespace npu::isa {
namespace {

TEST(Builder, DefaultsAndEngines) {
  CommandBufferBuilder b;
  b.dma_load({.dram = 0x4000, .sram = 0, .elem_size = 1, .size = {64, 8, 1}});
  const auto& d = b.commands()[0].dma;
  EXPECT_EQ(b.commands()[0].hdr.engine, NPU_ENGINE_DMA_IN);
  EXPECT_EQ(d.dram_stride[0], 1u);
  EXPECT_EQ(d.dram_stride[1], 64u);
  EXPECT_EQ(d.dram_stride[2], 512u);
  EXPECT_EQ(d.sram_stride[0], 64u);
  EXPECT_EQ(d.sram_stride[1], 512u);

  b.conv2d({.in_h = 7,
            .in_w = 9,
            .in_c = 3,
            .out_c = 8,
            .k_h = 3,
            .k_w = 3,
            .stride_h = 2,
            .stride_w = 2,
            .dil_h = 2,
            .pad_top = 1,
            .pad_bottom = 1});
  const auto& c = b.commands()[1].conv2d;
  EXPECT_EQ(b.commands()[1].hdr.engine, NPU_ENGINE_MATRIX);
  EXPECT_EQ(c.out_h, (7 + 2 - 2 * 2 - 1) / 2 + 1);
  EXPECT_EQ(c.out_w, (9 - 2 - 1) / 2 + 1);
  EXPECT_EQ(c.groups, 1);
  EXPECT_EQ(c.dil_w, 1);
  EXPECT_EQ(c.clamp_min, -128);
  EXPECT_EQ(c.clamp_max, 127);
  EXPECT_TRUE(std::isinf(c.fclamp_min) && c.fclamp_min < 0);

  b.eltwise({.shape = {2, 3, 4, 5}});
  const auto& e = b.commands()[2].eltwise;
  EXPECT_EQ(b.commands()[2].hdr.engine, NPU_ENGINE_VECTOR);
  EXPECT_EQ(e.a.stride[0], 60u);
  EXPECT_EQ(e.a.stride[1], 20u);
  EXPECT_EQ(e.a.stride[2], 5u);
  EXPECT_EQ(e.a.stride[3], 1u);

  b.requantize({.out_dtype = NPU_DTYPE_UINT8});
  EXPECT_EQ(b.commands()[3].requant.clamp_min, 0);
  EXPECT_EQ(b.commands()[3].requant.clamp_max, 255);

  b.sem_wait(NPU_ENGINE_VECTOR, 4, 2);
  EXPECT_EQ(b.commands()[4].hdr.opcode, NPU_OP_SEM_WAIT);
  EXPECT_EQ(b.commands()[4].hdr.engine, NPU_ENGINE_VECTOR);
  EXPECT_EQ(b.commands()[4].sem.count, 2u);
}

TEST(Builder, PaddedSramStrides) {
  CommandBufferBuilder b;
  b.dma_load({.elem_size = 2, .size = {4, 4, 2}, .pad_before = {1, 2, 0}, .pad_after = {1, 2, 0}});
  EXPECT_EQ(b.commands()[0].dma.sram_stride[0], 6u * 2);
  EXPECT_EQ(b.commands()[0].dma.sram_stride[1], 6u * 8 * 2);
}

TEST(Builder, FinishWritesHeaderAndEnd) {
  CommandBufferBuilder b;
  b.nop(NPU_ENGINE_MATRIX);
  auto buf = b.finish(NPU_FEATURE_INT8);
  ASSERT_EQ(buf.size(), 32u + 2 * 128);
  npu_cmdbuf_header h;
  std::memcpy(&h, buf.data(), sizeof h);
  EXPECT_EQ(h.magic, NPU_ISA_MAGIC);
  EXPECT_EQ(h.version_major, NPU_ISA_VERSION_MAJOR);
  EXPECT_EQ(h.size, buf.size());
  EXPECT_EQ(h.num_cmds, 2u);
  EXPECT_EQ(h.required_features, NPU_FEATURE_INT8);
  // A second finish does not add another END.
  EXPECT_EQ(b.finish().size(), buf.size());
  EXPECT_EQ(b.size(), 2u);
}

TEST(Builder, FinishDeclaresFeaturesOfCommands) {
  CommandBufferBuilder b;
  b.activation({.func = NPU_ACT_EXP, .shape = {1, 1, 1, 4}});
  auto buf = b.finish();
  npu_cmdbuf_header h;
  std::memcpy(&h, buf.data(), sizeof h);
  EXPECT_EQ(h.required_features, NPU_FEATURE_FP32 | NPU_FEATURE_TRANSCENDENTAL);
}

TEST(Builder, DoubleBufferedPipelineValidates) {
  // The shape the compiler emits: DMA_IN loads tile i while MATRIX convolves tile i-1,
  // VECTOR requantizes, DMA_OUT stores; one semaphore per producer->consumer edge.
  constexpr uint64_t kIn = 0x10000, kOut = 0x80000;
  CommandBufferBuilder b;
  for (uint32_t t = 0; t < 4; ++t) {
    const uint32_t buf = (t % 2) * 0x10000;
    b.dma_load({.dram = kIn + t * 1024,
                .sram = buf,
                .elem_size = 1,
                .size = {16, 8, 8},
                .pad_before = {0, 1, 1},
                .pad_after = {0, 1, 1}});
    b.sem_signal(NPU_ENGINE_DMA_IN, 0);
    b.sem_wait(NPU_ENGINE_MATRIX, 0);
    b.conv2d({.in_addr = buf,
              .w_addr = 0x40000,
              .out_addr = 0x50000 + buf,
              .chan_addr = 0x48000,
              .in_h = 10,
              .in_w = 10,
              .in_c = 16,
              .out_c = 32,
              .k_h = 3,
              .k_w = 3,
              .out_dtype = NPU_DTYPE_INT32});
    b.sem_signal(NPU_ENGINE_MATRIX, 1);
    b.sem_wait(NPU_ENGINE_VECTOR, 1);
    b.requantize({.in_addr = 0x50000 + buf,
                  .out_addr = 0x70000 + buf,
                  .count = 8 * 8 * 32,
                  .multiplier = 1 << 30,
                  .shift = 40});
    b.sem_signal(NPU_ENGINE_VECTOR, 2);
    b.sem_wait(NPU_ENGINE_DMA_OUT, 2);
    b.dma_store(
        {.dram = kOut + t * 2048, .sram = 0x70000 + buf, .elem_size = 1, .size = {2048, 1, 1}});
  }
  b.fence();
  auto buf = b.finish();
  auto p = validate(buf, {});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->dram.size(), 8u);
  EXPECT_EQ(p->header.required_features, NPU_FEATURE_INT8);
}

TEST(Builder, HelpersAndRawAdd) {
  const auto v = CommandBufferBuilder::contiguous(128, {1, 2, 3, 4});
  EXPECT_EQ(v.addr, 128u);
  EXPECT_EQ(v.stride[0], 24u);
  EXPECT_EQ(CommandBufferBuilder::conv_out_size(224, 3, 3, 7, 1, 2), 112u);
  EXPECT_EQ(CommandBufferBuilder::conv_out_size(2, 0, 0, 3), 0u);
  npu_cmd raw{};
  raw.hdr.opcode = NPU_OP_NOP;
  raw.hdr.engine = NPU_ENGINE_DMA_IN;
  CommandBufferBuilder b;
  EXPECT_EQ(b.add(raw), 0u);
  EXPECT_EQ(b.end(), 1u);
  auto p = validate(b.finish(), {});
  EXPECT_TRUE(p) << p.error().message;
}

}  // namespace
}  // namespace npu::isa

// ISA 1.1 (fp16/bf16) in libnpuisa: the validator's rules for converting DMAs, the half matrix
// modes and the vector engine's refusals (each with its message), the NPU_FEATURE_FP16
// declaration the builder adds and the validator requires, a device without fp16, the DRAM
// extent of a converting DMA, the half array's cycles and the text form of the new fields.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "npu/isa/asm.h"
#include "npu/isa/builder.h"
#include "npu/isa/device_config.h"
#include "npu/isa/regions.h"
#include "npu/isa/timing.h"
#include "npu/isa/validate.h"

namespace npu::isa {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kVa = 0x100000;

/// A valid ISA 1.1 program: fp32 -> fp16 load, fp16 conv with fp32 bias, bf16 matmul with
/// fp32 output, an fp16 copy and transpose, fp16 -> fp32 store.
CommandBufferBuilder half_program() {
  CommandBufferBuilder b;
  b.dma_load({.dram = kVa,
              .sram = 0,
              .elem_size = 2,
              .size = {8, 8, 4},
              .pad_before = {1, 1, 0},
              .pad_after = {1, 1, 0},
              .pad_value = 0x3c00,
              .dram_dtype = NPU_DTYPE_FP32,
              .sram_dtype = NPU_DTYPE_FP16});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_MATRIX, 0);
  b.conv2d({.in_addr = 0,
            .w_addr = 4096,
            .out_addr = 8192,
            .chan_addr = 16384,
            .in_h = 10,
            .in_w = 10,
            .in_c = 4,
            .out_c = 8,
            .k_h = 3,
            .k_w = 3,
            .in_dtype = NPU_DTYPE_FP16,
            .w_dtype = NPU_DTYPE_FP16,
            .out_dtype = NPU_DTYPE_FP16,
            .fclamp_min = 0.0f,
            .bias = true});
  b.matmul({.a_addr = 20000,
            .b_addr = 24000,
            .out_addr = 28000,
            .m = 4,
            .k = 16,
            .n = 8,
            .batch = 2,
            .a_dtype = NPU_DTYPE_BF16,
            .b_dtype = NPU_DTYPE_BF16,
            .out_dtype = NPU_DTYPE_FP32,
            .transpose_b = true});
  b.sem_signal(NPU_ENGINE_MATRIX, 1);
  b.sem_wait(NPU_ENGINE_VECTOR, 1);
  b.activation({.func = NPU_ACT_COPY,
                .dtype = NPU_DTYPE_FP16,
                .shape = {1, 8, 8, 8},
                .in_addr = 8192,
                .out_addr = 32768});
  b.transpose({.in_addr = 32768,
               .out_addr = 40000,
               .in_shape = {1, 8, 8, 8},
               .perm = {0, 3, 1, 2},
               .elem_size = 2});
  b.sem_signal(NPU_ENGINE_VECTOR, 2);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 2);
  b.dma_store({.dram = kVa + 65536,
               .sram = 40000,
               .elem_size = 2,
               .size = {8, 8, 8},
               .dram_dtype = NPU_DTYPE_FP32,
               .sram_dtype = NPU_DTYPE_FP16});
  b.end();
  return b;
}

// Indices into half_program().
constexpr size_t kLoad = 0, kConv = 3, kMatmul = 4, kCopy = 7, kStore = 11;

std::string fail_message(const CommandBufferBuilder& b, const DeviceConfig& cfg = {}) {
  const auto buf = CommandBufferBuilder::serialize(b.commands(), NPU_FEATURES_ALL);
  auto r = validate(buf, cfg);
  if (r) return "<passed>";
  EXPECT_EQ(r.error().code, EINVAL);
  return r.error().message;
}

TEST(Half, ProgramPassesAndDeclaresFp16) {
  auto b = half_program();
  const auto buf = b.finish();
  auto r = validate(buf, {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->header.required_features, uint64_t{NPU_FEATURE_FP16});
  for (size_t i : {kLoad, kConv, kMatmul, kCopy, kStore})
    EXPECT_EQ(command_features(r->cmds[i]), uint64_t{NPU_FEATURE_FP16}) << i;
  // A plain (non-converting) DMA of 2-byte elements needs nothing.
  CommandBufferBuilder p;
  EXPECT_EQ(command_features(p.cmd(p.dma_load({.elem_size = 2, .size = {4, 1, 1}}))), 0u);
}

struct Case {
  const char* name;
  std::function<void(CommandBufferBuilder&)> mutate;
  const char* expected;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class HalfRejects : public ::testing::TestWithParam<Case> {};

TEST_P(HalfRejects, WithMessage) {
  auto b = half_program();
  ASSERT_EQ(fail_message(b), "<passed>");
  GetParam().mutate(b);
  EXPECT_THAT(fail_message(b), HasSubstr(GetParam().expected)) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(
    Errors, HalfRejects,
    ::testing::Values(
        Case{"dma_one_side_only", [](auto& b) { b.cmd(kLoad).dma.dram_dtype = 0; },
             "command 0 (dma_load): field dram_dtype: expected fp32, fp16 or bf16 (or 0 on both "
             "sides: no conversion), got dtype 0"},
        Case{"dma_int_dtype", [](auto& b) { b.cmd(kStore).dma.dram_dtype = NPU_DTYPE_INT8; },
             "command 11 (dma_store): field dram_dtype: expected fp32, fp16 or bf16 (or 0 on "
             "both sides: no conversion), got int8"},
        Case{"dma_unknown_dtype", [](auto& b) { b.cmd(kLoad).dma.sram_dtype = 9; },
             "command 0 (dma_load): field sram_dtype: expected fp32, fp16 or bf16 (or 0 on both "
             "sides: no conversion), got dtype 9"},
        Case{"dma_elem_size_not_sram_dtype", [](auto& b) { b.cmd(kLoad).dma.elem_size = 4; },
             "command 0 (dma_load): field elem_size: expected 2 (the size of sram_dtype fp16), "
             "got 4"},
        Case{"conv_fp16_bf16_weights",
             [](auto& b) { b.cmd(kConv).conv2d.w_dtype = NPU_DTYPE_BF16; },
             "command 3 (conv2d): field w_dtype: expected fp16 (fp16 mode), got bf16"},
        Case{"conv_fp16_int8_out", [](auto& b) { b.cmd(kConv).conv2d.out_dtype = NPU_DTYPE_INT8; },
             "command 3 (conv2d): field out_dtype: expected fp16 or fp32 (fp16 mode), got int8"},
        Case{"conv_fp16_bf16_out", [](auto& b) { b.cmd(kConv).conv2d.out_dtype = NPU_DTYPE_BF16; },
             "command 3 (conv2d): field out_dtype: expected fp16 or fp32 (fp16 mode), got bf16"},
        Case{"conv_fp32_fp16_weights",
             [](auto& b) {
               auto& c = b.cmd(kConv).conv2d;
               c.in_dtype = c.out_dtype = NPU_DTYPE_FP32;
             },
             "command 3 (conv2d): field w_dtype: expected fp32 (fp32 mode), got fp16"},
        Case{"conv_int8_fp16_weights",
             [](auto& b) {
               auto& c = b.cmd(kConv).conv2d;
               c.in_dtype = NPU_DTYPE_INT8;
               c.hdr.flags = 0;
             },
             "command 3 (conv2d): field w_dtype: expected int8 or uint8, got fp16"},
        Case{"conv_half_nan_clamp",
             [](auto& b) {
               b.cmd(kConv).conv2d.fclamp_max = std::numeric_limits<float>::quiet_NaN();
             },
             "command 3 (conv2d): field fclamp_max: must not be nan"},
        Case{"matmul_bf16_fp16_b", [](auto& b) { b.cmd(kMatmul).matmul.b_dtype = NPU_DTYPE_FP16; },
             "command 4 (matmul): field b_dtype: expected bf16 (bf16 mode), got fp16"},
        Case{"matmul_bf16_int32_out",
             [](auto& b) { b.cmd(kMatmul).matmul.out_dtype = NPU_DTYPE_INT32; },
             "command 4 (matmul): field out_dtype: expected bf16 or fp32 (bf16 mode), got int32"},
        Case{"relu_fp16", [](auto& b) { b.cmd(kCopy).activation.func = NPU_ACT_RELU; },
             "command 7 (activation): field dtype: fp16 is not computed on the vector engine "
             "(only activation copy and transpose move fp16/bf16 elements; convert with a DMA)"},
        Case{"sigmoid_bf16",
             [](auto& b) {
               auto& a = b.cmd(kCopy).activation;
               a.func = NPU_ACT_SIGMOID;
               a.dtype = NPU_DTYPE_BF16;
             },
             "command 7 (activation): field dtype: bf16 is not computed on the vector engine"},
        Case{"eltwise_fp16",
             [](auto& b) {
               npu_cmd& c = b.cmd(kCopy);
               const npu_vtensor in = c.activation.in, out = c.activation.out;
               std::memset(&c, 0, sizeof c);
               c.hdr.opcode = NPU_OP_ELTWISE;
               c.hdr.engine = NPU_ENGINE_VECTOR;
               c.eltwise.op = NPU_ELTWISE_ADD;
               c.eltwise.dtype = NPU_DTYPE_FP16;
               for (int i = 0; i < 4; ++i) c.eltwise.shape[i] = 1;
               c.eltwise.a = in, c.eltwise.b = in, c.eltwise.out = out;
             },
             "command 7 (eltwise): field dtype: fp16 is not computed on the vector engine"},
        Case{"pool_bf16",
             [](auto& b) {
               npu_cmd& c = b.cmd(kCopy);
               std::memset(&c.pool, 0, sizeof c.pool);
               c.hdr.opcode = NPU_OP_POOL;
               c.hdr.engine = NPU_ENGINE_VECTOR;
               c.pool.kind = NPU_POOL_MAX;
               c.pool.dtype = NPU_DTYPE_BF16;
               c.pool.in_h = c.pool.in_w = c.pool.channels = c.pool.out_h = c.pool.out_w = 1;
               c.pool.k_h = c.pool.k_w = c.pool.stride_h = c.pool.stride_w = 1;
             },
             "command 7 (pool): field dtype: bf16 is not computed on the vector engine"},
        Case{"quantize_from_fp16",
             [](auto& b) {
               npu_cmd& c = b.cmd(kCopy);
               std::memset(&c.quant, 0, sizeof c.quant);
               c.hdr.opcode = NPU_OP_QUANTIZE;
               c.hdr.engine = NPU_ENGINE_VECTOR;
               c.quant.in_dtype = NPU_DTYPE_FP16;
               c.quant.out_dtype = NPU_DTYPE_INT8;
               c.quant.count = c.quant.channels = c.quant.inner = 1;
               c.quant.scale = 1.0f;
             },
             "command 7 (quantize): field in_dtype: fp16 is not computed on the vector engine"}));

TEST(Half, UndeclaredFeatureIsRefused) {
  auto b = half_program();
  // Every feature but fp16 declared: the first half command names the missing declaration.
  const auto buf =
      CommandBufferBuilder::serialize(b.commands(), NPU_FEATURES_ALL & ~uint64_t{NPU_FEATURE_FP16});
  auto r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "command 0 (dma_load): uses fp16/bf16, but the buffer's required_features does not "
            "declare fp16 (ISA 1.1)");
}

TEST(Half, DeviceWithoutFp16Refuses) {
  DeviceConfig cfg;
  cfg.features = NPU_FEATURE_INT8 | NPU_FEATURE_FP32 | NPU_FEATURE_TRANSCENDENTAL;
  auto b = half_program();
  const auto buf = b.finish();
  auto r = validate(buf, cfg);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "command buffer: field required_features: device lacks feature fp16");
  // Undeclared, the command itself is refused.
  const auto raw = CommandBufferBuilder::serialize(b.commands(), 0);
  r = validate(raw, cfg);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "command 0 (dma_load): requires feature fp16, which the device does not implement");
  // The same config from JSON.
  auto json = DeviceConfig::from_json(R"({"features": ["int8", "fp32", "transcendental"]})");
  ASSERT_TRUE(json) << json.error().message;
  EXPECT_FALSE(validate(buf, *json));
  auto all = DeviceConfig::from_json(R"({"features": ["fp16"]})");
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->features, uint64_t{NPU_FEATURE_FP16});
}

TEST(Half, DefaultConfigHasFp16AndTheHalfArray) {
  const DeviceConfig cfg;
  EXPECT_EQ(cfg.features, uint64_t{NPU_FEATURES_ALL});
  EXPECT_EQ(cfg.matrix.fp16_rows, 32u);
  EXPECT_EQ(cfg.matrix.fp16_cols, 16u);
  auto back = DeviceConfig::from_json(cfg.to_json());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->matrix.fp16_rows, 32u);
  EXPECT_EQ(back->features, cfg.features);
  auto custom = DeviceConfig::from_json(R"({"matrix": {"fp16_rows": 64, "fp16_cols": 8}})");
  ASSERT_TRUE(custom) << custom.error().message;
  EXPECT_EQ(custom->matrix.fp16_rows, 64u);
  EXPECT_EQ(custom->matrix.fp16_cols, 8u);
  auto bad = DeviceConfig::from_json(R"({"matrix": {"fp16_cols": 0}})");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("matrix.fp16_cols"));
}

TEST(Half, ConvertingDmaRegionsUseTheDramElementSize) {
  auto b = half_program();
  std::vector<Region> regions;
  ASSERT_TRUE(command_regions(b.cmd(kLoad), regions));
  ASSERT_EQ(regions.size(), 2u);
  // DRAM: 8 x 8 x 4 fp32 elements (default strides use dram_dtype's size); SRAM: the padded
  // fp16 box 10 x 10 x 4.
  EXPECT_EQ(regions[0].space, Space::Dram);
  EXPECT_EQ(regions[0].end - regions[0].begin, 8u * 8 * 4 * 4);
  EXPECT_EQ(regions[1].space, Space::Sram);
  EXPECT_EQ(regions[1].end - regions[1].begin, 10u * 10 * 4 * 2);
  EXPECT_EQ(b.cmd(kLoad).dma.dram_stride[0], 4u);
  EXPECT_EQ(b.cmd(kLoad).dma.sram_stride[0], 20u);
}

TEST(Half, Fp16ConvIsCheaperThanFp32AndDmaCountsDramBytes) {
  const DeviceConfig cfg;
  CommandBufferBuilder b;
  Conv2dArgs a{.in_h = 56,
               .in_w = 56,
               .in_c = 64,
               .out_c = 64,
               .k_h = 3,
               .k_w = 3,
               .pad_top = 1,
               .pad_left = 1,
               .pad_bottom = 1,
               .pad_right = 1,
               .in_dtype = NPU_DTYPE_FP32,
               .w_dtype = NPU_DTYPE_FP32,
               .out_dtype = NPU_DTYPE_FP32};
  const CommandCost f32 = command_cost(b.cmd(b.conv2d(a)), cfg);
  a.in_dtype = a.w_dtype = a.out_dtype = NPU_DTYPE_FP16;
  const CommandCost f16 = command_cost(b.cmd(b.conv2d(a)), cfg);
  a.in_dtype = a.w_dtype = NPU_DTYPE_BF16;
  a.out_dtype = NPU_DTYPE_FP32;
  const CommandCost b16 = command_cost(b.cmd(b.conv2d(a)), cfg);
  a.in_dtype = a.w_dtype = a.out_dtype = NPU_DTYPE_INT8;
  const CommandCost i8 = command_cost(b.cmd(b.conv2d(a)), cfg);
  EXPECT_EQ(f16.macs, f32.macs);
  // K = 576: fp32 36 row passes x 4 column passes, fp16 18 x 4, int8 18 x 2 per pixel.
  EXPECT_EQ(f32.cycles, cfg.matrix.fill_latency + 56u * 56 * 36 * 4);
  EXPECT_EQ(f16.cycles, cfg.matrix.fill_latency + 56u * 56 * 18 * 4);
  EXPECT_EQ(b16.cycles, f16.cycles);
  EXPECT_LT(f16.cycles, f32.cycles);
  EXPECT_LT(i8.cycles, f16.cycles);
  // A narrower half array costs more.
  DeviceConfig narrow = cfg;
  narrow.matrix.fp16_rows = 16;
  a.in_dtype = a.w_dtype = a.out_dtype = NPU_DTYPE_FP16;
  EXPECT_EQ(command_cost(b.cmd(b.conv2d(a)), narrow).cycles, f32.cycles);

  // DMA: a converting load of 1024 fp32 moves 4096 DRAM bytes; the same box loaded as fp16
  // without conversion moves 2048.
  const uint32_t conv = b.dma_load({.dram = kVa,
                                    .elem_size = 2,
                                    .size = {1024, 1, 1},
                                    .dram_dtype = NPU_DTYPE_FP32,
                                    .sram_dtype = NPU_DTYPE_FP16});
  const uint32_t plain = b.dma_load({.dram = kVa, .elem_size = 2, .size = {1024, 1, 1}});
  const CommandCost cc = command_cost(b.cmd(conv), cfg), pc = command_cost(b.cmd(plain), cfg);
  EXPECT_EQ(cc.cycles, cfg.dma.latency + 4096u / cfg.dma.bytes_per_cycle);
  EXPECT_EQ(pc.cycles, cfg.dma.latency + 2048u / cfg.dma.bytes_per_cycle);
  EXPECT_EQ(cc.bytes, 4096u);
}

TEST(Half, AssemblerRoundTripsTheNewFieldsAndDtypes) {
  auto b = half_program();
  const auto bin = b.finish();
  auto text = disassemble(bin);
  ASSERT_TRUE(text) << text.error().message;
  for (const char* want :
       {".version 1.2", ".features fp16", "dram_dtype=fp32 sram_dtype=fp16",
        "in_dtype=fp16 w_dtype=fp16 out_dtype=fp16", "a_dtype=bf16 b_dtype=bf16 out_dtype=fp32",
        "pad_value=0x3c00", "func=copy", "dtype=fp16"}) {
    EXPECT_NE(text->find(want), std::string::npos) << want << "\n" << *text;
  }
  auto again = assemble(*text);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, bin);
  // Plain DMAs print no dtype fields.
  CommandBufferBuilder p;
  p.dma_load({.dram = kVa, .elem_size = 4, .size = {4, 1, 1}});
  p.end();
  auto plain = disassemble(p.finish());
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->find("dram_dtype"), std::string::npos) << *plain;
  // Text written by hand.
  auto hand = assemble(
      ".features fp16\n"
      "dma_load dram_addr=0x100000 elem_size=4 size=4,1,1 dram_stride=2,8,8 sram_stride=16,16 "
      "dram_dtype=bf16 sram_dtype=fp32\n"
      "end\n");
  ASSERT_TRUE(hand) << hand.error().message;
  auto v = validate(*hand, {});
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ(v->cmds[0].dma.dram_dtype, NPU_DTYPE_BF16);
  EXPECT_EQ(v->cmds[0].dma.sram_dtype, NPU_DTYPE_FP32);
}

}  // namespace
}  // namespace npu::isa

// validate(): valid programs for every opcode pass; every class of error is rejected with a
// message naming the command index and field.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "npu/isa/builder.h"
#include "npu/isa/validate.h"

namespace npu::isa {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kVa = 0x100000;

/// One command of every opcode, synchronized with semaphores. Returns the builder.
CommandBufferBuilder every_opcode() {
  CommandBufferBuilder b;
  b.marker(NPU_ENGINE_CP, 1);
  b.dma_load({.dram = kVa,
              .sram = 0,
              .elem_size = 1,
              .size = {64, 8, 1},
              .pad_before = {0, 1, 0},
              .pad_after = {0, 1, 0},
              .pad_value = 0});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_MATRIX, 0);
  b.conv2d({.in_addr = 0,
            .w_addr = 4096,
            .out_addr = 8192,
            .chan_addr = 16384,
            .in_h = 10,
            .in_w = 8,
            .in_c = 8,
            .out_c = 16,
            .k_h = 3,
            .k_w = 3,
            .pad_left = 1,
            .pad_right = 1,
            .in_zp = -3,
            .out_zp = 5});
  b.matmul({.a_addr = 0,
            .b_addr = 4096,
            .out_addr = 20000,
            .chan_addr = 16384,
            .m = 4,
            .k = 16,
            .n = 8,
            .batch = 2,
            .out_dtype = NPU_DTYPE_INT32,
            .transpose_b = true});
  b.matmul({.a_addr = 32768,
            .b_addr = 36864,
            .out_addr = 40960,
            .chan_addr = 45056,
            .m = 4,
            .k = 4,
            .n = 4,
            .a_dtype = NPU_DTYPE_FP32,
            .b_dtype = NPU_DTYPE_FP32,
            .out_dtype = NPU_DTYPE_FP32,
            .fclamp_min = 0.0f,
            .bias = true});
  b.sem_signal(NPU_ENGINE_MATRIX, 1);
  b.sem_wait(NPU_ENGINE_VECTOR, 1);
  b.eltwise({.op = NPU_ELTWISE_ADD,
             .dtype = NPU_DTYPE_FP32,
             .shape = {1, 1, 4, 4},
             .a_addr = 40960,
             .b_addr = 40960,
             .out_addr = 49152});
  b.eltwise({.op = NPU_ELTWISE_DIV,
             .dtype = NPU_DTYPE_INT8,
             .shape = {1, 1, 4, 4},
             .a_addr = 0,
             .b_addr = 0,
             .b_stride = {{0, 0, 0, 0}},
             .out_addr = 49152});
  b.activation({.func = NPU_ACT_GELU, .shape = {1, 1, 4, 4}, .in_addr = 49152, .out_addr = 49152});
  b.activation({.func = NPU_ACT_COPY,
                .dtype = NPU_DTYPE_UINT8,
                .shape = {1, 1, 1, 64},
                .in_addr = 0,
                .out_addr = 60000});
  b.pool({.kind = NPU_POOL_AVG,
          .dtype = NPU_DTYPE_INT8,
          .in_addr = 8192,
          .out_addr = 60000,
          .in_h = 8,
          .in_w = 8,
          .channels = 16,
          .k_h = 3,
          .k_w = 3,
          .stride_h = 2,
          .stride_w = 2,
          .pad_top = 1,
          .pad_left = 1,
          .count_pad = true});
  b.softmax({.in_addr = 49152, .out_addr = 49152, .rows = 4, .len = 4, .log = true});
  b.scale_shift({.in_addr = 49152,
                 .out_addr = 49152,
                 .scale_addr = 50000,
                 .shift_addr = 50016,
                 .outer = 4,
                 .channels = 4});
  b.quantize({.in_addr = 49152, .out_addr = 51000, .count = 16, .scale = 0.5f, .zp = -1});
  b.dequantize({.in_addr = 51000,
                .out_addr = 49152,
                .count = 16,
                .channels = 4,
                .inner = 1,
                .params_addr = 52000});
  b.requantize({.in_addr = 20000,
                .out_addr = 53000,
                .count = 64,
                .multiplier = 1 << 30,
                .shift = 33,
                .out_zp = 3,
                .clamp_min = 0});
  b.transpose({.in_addr = 0,
               .out_addr = 54000,
               .in_shape = {1, 8, 8, 8},
               .perm = {0, 3, 1, 2},
               .elem_size = 1});
  b.reduce({.kind = NPU_REDUCE_MAX,
            .in_addr = 49152,
            .out_addr = 55000,
            .outer = 1,
            .len = 4,
            .inner = 4});
  b.moments(
      {.in_addr = 49152, .mean_addr = 55100, .sq_addr = 55200, .outer = 1, .len = 4, .inner = 4});
  b.sem_signal(NPU_ENGINE_VECTOR, 2, 2);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 2, 2);
  b.dma_store({.dram = kVa + 4096, .sram = 55000, .elem_size = 4, .size = {4, 1, 1}});
  b.nop(NPU_ENGINE_DMA_OUT);
  b.fence(true, 42);
  b.end();
  return b;
}

Expected<Program> run(CommandBufferBuilder& b, const DeviceConfig& cfg = {}) {
  auto buf = b.finish();
  return validate(buf, cfg);
}

std::string fail_message(CommandBufferBuilder& b, const DeviceConfig& cfg = {}) {
  auto r = run(b, cfg);
  if (r) return "<passed>";
  EXPECT_EQ(r.error().code, EINVAL);
  return r.error().message;
}

TEST(Validate, EveryOpcodeProgramPasses) {
  auto b = every_opcode();
  auto p = run(b);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->cmds.size(), b.size());
  EXPECT_EQ(p->cmds.back().hdr.opcode, NPU_OP_END);
  // Every 1.0 datapath; fp16 (1.1) has its own program in half_test.cpp.
  EXPECT_EQ(p->header.required_features,
            NPU_FEATURE_INT8 | NPU_FEATURE_FP32 | NPU_FEATURE_TRANSCENDENTAL);
  ASSERT_EQ(p->dram.size(), 2u);
  EXPECT_EQ(p->dram[0].cmd_index, 1u);
  EXPECT_EQ(p->dram[0].access, kRead);
  EXPECT_EQ(p->dram[0].begin, kVa);
  EXPECT_EQ(p->dram[0].end, kVa + 64 * 8);
  EXPECT_EQ(p->dram[1].cmd_index, 24u);  // the dma_store
  EXPECT_EQ(p->dram[1].access, kWrite);
  EXPECT_EQ(p->dram[1].end - p->dram[1].begin, 16u);
  EXPECT_STREQ(p->dram[1].field, "dram_addr");
  EXPECT_EQ(std::memcmp(p->cmds.data(), b.commands().data(), b.size() * sizeof(npu_cmd)), 0);
}

TEST(Validate, MinimalProgram) {
  CommandBufferBuilder b;
  auto p = run(b);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->cmds.size(), 1u);
}

// ---- header ----

std::vector<std::byte> minimal() {
  CommandBufferBuilder b;
  b.nop();
  return b.finish();
}

npu_cmdbuf_header& header(std::vector<std::byte>& buf) {
  return *reinterpret_cast<npu_cmdbuf_header*>(buf.data());
}

// A program is the buffer's bytes as they were checked: its header and commands, copied from
// anywhere (a buffer at an odd address too: a BO at any offset).
TEST(Validate, TheProgramHoldsTheBytesItChecked) {
  const std::vector<std::byte> buf = minimal();
  std::vector<std::byte> shifted(buf.size() + 3);
  std::memcpy(shifted.data() + 3, buf.data(), buf.size());
  auto p = validate(std::span<const std::byte>(shifted).subspan(3), DeviceConfig{});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(std::memcmp(&p->header, buf.data(), sizeof(npu_cmdbuf_header)), 0);
  ASSERT_EQ(p->cmds.size(), 2u);
  EXPECT_EQ(
      std::memcmp(p->cmds.data(), buf.data() + sizeof(npu_cmdbuf_header), 2 * sizeof(npu_cmd)), 0);
  EXPECT_EQ(p->cmds[0].hdr.opcode, NPU_OP_NOP);
  EXPECT_EQ(p->cmds[1].hdr.opcode, NPU_OP_END);
}

TEST(Validate, TooSmall) {
  std::vector<std::byte> buf(16);
  auto r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "command buffer: size 16 smaller than the 32-byte header");
}

TEST(Validate, BadMagic) {
  auto buf = minimal();
  header(buf).magic = 0x12345678;
  auto r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "command buffer: field magic: expected 0x4355504e, got 0x12345678");
}

TEST(Validate, BadVersion) {
  auto buf = minimal();
  header(buf).version_major = 2;
  auto r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("field version_major: expected 1, got 2"));
  buf = minimal();
  header(buf).version_minor = NPU_ISA_VERSION_MINOR + 1;
  r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("field version_minor"));
}

TEST(Validate, MoreCommandsThanTheLimit) {
  auto buf = minimal();
  header(buf).num_cmds = NPU_MAX_CMDS + 1;  // refused before the size is even compared
  auto r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "command buffer: field num_cmds: 1048577 commands, more than the 1048576 a command "
            "buffer may hold");
}

TEST(Validate, SizeMismatch) {
  auto buf = minimal();
  header(buf).size += 128;
  auto r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("field size: header says 416 bytes, buffer has 288"));

  buf = minimal();
  header(buf).num_cmds = 3;
  r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("field size: expected 32 + num_cmds * 128 = 416"));

  buf = minimal();
  buf.resize(buf.size() + 8);
  header(buf).size = static_cast<uint32_t>(buf.size());
  r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("field size"));

  buf = minimal();
  buf.resize(32);
  header(buf).size = 32;
  header(buf).num_cmds = 0;
  r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("field num_cmds"));
}

TEST(Validate, HeaderReserved) {
  auto buf = minimal();
  header(buf).reserved = 1;
  auto r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("field reserved: must be zero"));
}

TEST(Validate, MissingFeature) {
  CommandBufferBuilder b;
  b.softmax({.rows = 1, .len = 8});
  DeviceConfig cfg;
  cfg.features = NPU_FEATURE_INT8 | NPU_FEATURE_FP32;
  // finish() declares transcendental: the header check names it.
  auto buf = b.finish();
  auto r = validate(buf, cfg);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "command buffer: field required_features: device lacks feature transcendental");
  // Not declared in the header: the command itself is rejected.
  buf = CommandBufferBuilder::serialize(b.commands(), 0);
  r = validate(buf, cfg);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "command 0 (softmax): requires feature transcendental, which the device does not "
            "implement");
  // Unknown feature bits.
  buf = CommandBufferBuilder::serialize(b.commands(), 1ull << 40);
  r = validate(buf, {});
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("unknown feature bits"));
}

// ---- per-command errors: each mutation of the every-opcode program must be rejected ----

struct Mutation {
  const char* name;
  std::function<void(CommandBufferBuilder&)> mutate;
  const char* expected;  // substring of the message
};

void PrintTo(const Mutation& m, std::ostream* os) {
  *os << m.name;
}

class ValidateRejects : public ::testing::TestWithParam<Mutation> {};

TEST_P(ValidateRejects, WithMessage) {
  auto b = every_opcode();
  GetParam().mutate(b);
  const auto buf = CommandBufferBuilder::serialize(b.commands(), NPU_FEATURES_ALL);
  auto r = validate(buf, {});
  ASSERT_FALSE(r) << GetParam().name;
  EXPECT_EQ(r.error().code, EINVAL);
  EXPECT_THAT(r.error().message, HasSubstr(GetParam().expected)) << GetParam().name;
}

// Indices into every_opcode().
constexpr size_t kDmaLoad = 1, kSig0 = 2, kWait0 = 3, kConv = 4, kMatmul = 5, kMatmulF = 6,
                 kEltF = 9, kEltI = 10, kAct = 11, kCopy = 12, kPool = 13, kSoftmax = 14,
                 kScale = 15, kQuant = 16, kDequant = 17, kRequant = 18, kTranspose = 19,
                 kReduce = 20, kMoments = 21, kDmaStore = 24, kFence = 26, kEnd = 27;

INSTANTIATE_TEST_SUITE_P(
    Errors, ValidateRejects,
    ::testing::Values(
        Mutation{"unknown_opcode", [](auto& b) { b.cmd(kConv).hdr.opcode = 0x7f; },
                 "command 4 (unknown): field opcode: unknown opcode 0x7f"},
        Mutation{"wrong_engine", [](auto& b) { b.cmd(kConv).hdr.engine = NPU_ENGINE_VECTOR; },
                 "command 4 (conv2d): field engine: expected matrix, got vector"},
        Mutation{"engine_out_of_range", [](auto& b) { b.cmd(kDmaLoad).hdr.engine = 9; },
                 "command 1 (dma_load): field engine: expected dma_in, got engine 9"},
        Mutation{"sem_on_cp", [](auto& b) { b.cmd(kSig0).hdr.engine = NPU_ENGINE_CP; },
                 "command 2 (sem_signal): field engine"},
        Mutation{"end_on_vector", [](auto& b) { b.cmd(kEnd).hdr.engine = NPU_ENGINE_VECTOR; },
                 "command 27 (end): field engine: expected cp, got vector"},
        Mutation{"hdr_reserved", [](auto& b) { b.cmd(kConv).hdr.reserved = 1; },
                 "command 4 (conv2d): field hdr.reserved: must be zero"},
        Mutation{"undefined_flag", [](auto& b) { b.cmd(kConv).hdr.flags = 0x80; },
                 "command 4 (conv2d): field flags: undefined flag bits 0x80"},
        Mutation{"reserved_tail", [](auto& b) { b.cmd(kDmaLoad).dma.reserved[5] = 1; },
                 "command 1 (dma_load): field reserved[5]: must be zero, got 0x1"},
        Mutation{"reserved_end", [](auto& b) { b.cmd(kEnd).end.reserved[119] = 1; },
                 "command 27 (end): field reserved[119]"},
        Mutation{"conv_reserved1", [](auto& b) { b.cmd(kConv).conv2d.reserved1 = 2; },
                 "command 4 (conv2d): field reserved1: must be zero"},
        Mutation{"reduce_reserved0", [](auto& b) { b.cmd(kReduce).reduce.reserved0[2] = 1; },
                 "command 20 (reduce): field reserved0[2]"},
        Mutation{"conv_bad_dtype",
                 [](auto& b) { b.cmd(kConv).conv2d.in_dtype = NPU_DTYPE_INT32; },
                 "command 4 (conv2d): field in_dtype: expected int8, uint8, fp32, fp16 or bf16, got int32"},
        Mutation{"conv_mixed_fp32",
                 [](auto& b) { b.cmd(kConv).conv2d.w_dtype = NPU_DTYPE_FP32; },
                 "command 4 (conv2d): field w_dtype: expected int8 or uint8, got fp32"},
        Mutation{"matmul_fp32_int_out",
                 [](auto& b) { b.cmd(kMatmulF).matmul.out_dtype = NPU_DTYPE_INT8; },
                 "command 6 (matmul): field out_dtype: expected fp32 (fp32 mode)"},
        Mutation{"conv_shape_mismatch", [](auto& b) { b.cmd(kConv).conv2d.out_h = 9; },
                 "command 4 (conv2d): field out_h: expected 8, got 9"},
        Mutation{"conv_groups", [](auto& b) { b.cmd(kConv).conv2d.groups = 3; },
                 "command 4 (conv2d): field groups: 3 does not divide in_c 8"},
        Mutation{"conv_stride_zero", [](auto& b) { b.cmd(kConv).conv2d.stride_h = 0; },
                 "command 4 (conv2d): field stride_h: must be >= 1, got 0"},
        Mutation{"conv_kernel_too_big", [](auto& b) { b.cmd(kConv).conv2d.k_h = 11; },
                 "command 4 (conv2d): field k_h: window of 11 larger than the padded input"},
        Mutation{"conv_clamp_order",
                 [](auto& b) {
                   b.cmd(kConv).conv2d.clamp_min = 10;
                   b.cmd(kConv).conv2d.clamp_max = 0;
                 },
                 "command 4 (conv2d): field clamp_min: greater than clamp_max"},
        Mutation{"conv_clamp_range", [](auto& b) { b.cmd(kConv).conv2d.clamp_max = 300; },
                 "command 4 (conv2d): field clamp_max: expected -128..127, got 300"},
        Mutation{"conv_int_bias_flag",
                 [](auto& b) { b.cmd(kConv).hdr.flags = NPU_MM_FLAG_BIAS; },
                 "command 4 (conv2d): field flags: bias flag is fp32 only"},
        Mutation{"matmul_fclamp_nan",
                 [](auto& b) {
                   b.cmd(kMatmulF).matmul.fclamp_max = std::numeric_limits<float>::quiet_NaN();
                 },
                 "command 6 (matmul): field fclamp_max: must not be nan"},
        Mutation{"matmul_zero_k", [](auto& b) { b.cmd(kMatmul).matmul.k = 0; },
                 "command 5 (matmul): field k: must be >= 1, got 0"},
        Mutation{"eltwise_pow_int", [](auto& b) { b.cmd(kEltI).eltwise.op = NPU_ELTWISE_POW; },
                 "command 10 (eltwise): field dtype: expected fp32 (pow and prelu are fp32 "
                 "only), got int8"},
        Mutation{"eltwise_bad_op", [](auto& b) { b.cmd(kEltF).eltwise.op = 9; },
                 "command 9 (eltwise): field op: expected 1..8, got 9"},
        Mutation{"eltwise_zero_shape", [](auto& b) { b.cmd(kEltF).eltwise.shape[2] = 0; },
                 "command 9 (eltwise): field shape[2]: must be >= 1, got 0"},
        Mutation{"eltwise_uint8", [](auto& b) { b.cmd(kEltI).eltwise.dtype = NPU_DTYPE_UINT8; },
                 "command 10 (eltwise): field dtype: expected fp32, int32 or int8, got uint8"},
        Mutation{"activation_int_gelu",
                 [](auto& b) { b.cmd(kAct).activation.dtype = NPU_DTYPE_INT8; },
                 "command 11 (activation): field dtype: expected fp32, got int8"},
        Mutation{"activation_bad_func", [](auto& b) { b.cmd(kCopy).activation.func = 19; },
                 "command 12 (activation): field func: expected 1..18, got 19"},
        Mutation{"activation_bad_dtype", [](auto& b) { b.cmd(kCopy).activation.dtype = 9; },
                 "command 12 (activation): field dtype: expected int8, uint8, int32, fp32, fp16 or "
                 "bf16, got dtype 9"},
        Mutation{"pool_shape", [](auto& b) { b.cmd(kPool).pool.out_w = 5; },
                 "command 13 (pool): field out_w: expected 4, got 5"},
        Mutation{"pool_pad_ge_k", [](auto& b) { b.cmd(kPool).pool.pad_top = 3; },
                 "command 13 (pool): field pad_top: padding 3 must be smaller than the window 3"},
        Mutation{"pool_count_pad_max",
                 [](auto& b) { b.cmd(kPool).pool.kind = NPU_POOL_MAX; },
                 "command 13 (pool): field flags: count_pad is only defined for avg pooling"},
        Mutation{"softmax_rows", [](auto& b) { b.cmd(kSoftmax).softmax.rows = 0; },
                 "command 14 (softmax): field rows: must be >= 1, got 0"},
        Mutation{"scale_channels", [](auto& b) { b.cmd(kScale).scale_shift.channels = 0; },
                 "command 15 (scale_shift): field channels"},
        Mutation{"quant_out_dtype",
                 [](auto& b) { b.cmd(kQuant).quant.out_dtype = NPU_DTYPE_INT32; },
                 "command 16 (quantize): field out_dtype: expected int8 or uint8, got int32"},
        Mutation{"quant_scale_zero", [](auto& b) { b.cmd(kQuant).quant.scale = 0.0f; },
                 "command 16 (quantize): field scale: must be finite and > 0"},
        Mutation{"quant_zp_range", [](auto& b) { b.cmd(kQuant).quant.zp = 200; },
                 "command 16 (quantize): field zp: expected -128..127, got 200"},
        Mutation{"dequant_inner", [](auto& b) { b.cmd(kDequant).quant.inner = 0; },
                 "command 17 (dequantize): field inner: must be >= 1, got 0"},
        Mutation{"dequant_channels", [](auto& b) { b.cmd(kDequant).quant.channels = 0; },
                 "command 17 (dequantize): field channels: must be >= 1, got 0"},
        Mutation{"requant_shift", [](auto& b) { b.cmd(kRequant).requant.shift = 63; },
                 "command 18 (requantize): field shift: expected 0..62, got 63"},
        Mutation{"requant_multiplier", [](auto& b) { b.cmd(kRequant).requant.multiplier = -1; },
                 "command 18 (requantize): field multiplier"},
        Mutation{"requant_out_dtype",
                 [](auto& b) { b.cmd(kRequant).requant.out_dtype = NPU_DTYPE_INT32; },
                 "command 18 (requantize): field out_dtype"},
        Mutation{"transpose_perm", [](auto& b) { b.cmd(kTranspose).transpose.perm[3] = 1; },
                 "command 19 (transpose): field perm: not a permutation of 0..3 (0, 3, 1, 1)"},
        Mutation{"transpose_elem", [](auto& b) { b.cmd(kTranspose).transpose.elem_size = 3; },
                 "command 19 (transpose): field elem_size: expected 1, 2 or 4, got 3"},
        Mutation{"reduce_kind", [](auto& b) { b.cmd(kReduce).reduce.kind = 5; },
                 "command 20 (reduce): field kind: expected 1..4, got 5"},
        Mutation{"dma_elem_size", [](auto& b) { b.cmd(kDmaLoad).dma.elem_size = 3; },
                 "command 1 (dma_load): field elem_size: expected 1, 2 or 4, got 3"},
        Mutation{"dma_zero_size", [](auto& b) { b.cmd(kDmaLoad).dma.size[1] = 0; },
                 "command 1 (dma_load): field size[1]: must be >= 1, got 0"},
        Mutation{"dma_store_padding", [](auto& b) { b.cmd(kDmaStore).dma.pad_after[2] = 1; },
                 "command 24 (dma_store): field pad_after[2]: dma_store must have zero padding"},
        Mutation{"dma_store_pad_value", [](auto& b) { b.cmd(kDmaStore).dma.pad_value = 1; },
                 "command 24 (dma_store): field pad_value: must be zero"},
        Mutation{"sram_out_of_range", [](auto& b) { b.cmd(kDmaLoad).dma.sram_addr = 2097000; },
                 "command 1 (dma_load): field sram_addr: sram range [2097000, 2097640) outside "
                 "2097152-byte sram"},
        Mutation{"sram_conv_out", [](auto& b) { b.cmd(kConv).conv2d.out_addr = 0xffffff00; },
                 "command 4 (conv2d): field out_addr: sram range"},
        Mutation{"stride_overflow",
                 [](auto& b) {
                   auto& d = b.cmd(kDmaLoad).dma;
                   d.size[1] = 0xffffffff;
                   d.size[2] = 0xffffffff;
                   d.dram_stride[1] = 0xffffffff;
                   d.dram_stride[2] = 0xffffffff;
                 },
                 "command 1 (dma_load): field dram_stride[2]: byte arithmetic overflows 64 bits"},
        Mutation{"dram_addr_overflow",
                 [](auto& b) { b.cmd(kDmaLoad).dma.dram_addr = UINT64_MAX - 10; },
                 "command 1 (dma_load): field dram_addr: byte arithmetic overflows 64 bits"},
        Mutation{"sem_id_range", [](auto& b) { b.cmd(kSig0).sem.sem = 32; },
                 "command 2 (sem_signal): field sem: semaphore 32 out of range (device has 32)"},
        Mutation{"sem_count_zero", [](auto& b) { b.cmd(kWait0).sem.count = 0; },
                 "command 3 (sem_wait): field count: expected 1..65535, got 0"},
        Mutation{"sem_count_max", [](auto& b) { b.cmd(kWait0).sem.count = 65536; },
                 "command 3 (sem_wait): field count: expected 1..65535, got 65536"},
        Mutation{"sem_two_signallers",
                 [](auto& b) {
                   b.cmd(7).sem.sem = 0;  // matrix signals semaphore 0, dma_in already does
                 },
                 "command 7 (sem_signal): field sem: semaphore 0 signalled by engine matrix "
                 "here and by engine dma_in at command 2"},
        Mutation{"sem_two_waiters", [](auto& b) { b.cmd(8).sem.sem = 0; },
                 "command 8 (sem_wait): field sem: semaphore 0 waited on by engine vector here "
                 "and by engine matrix at command 3"},
        Mutation{"moments_reserved", [](auto& b) { b.cmd(kMoments).moments.reserved[95] = 2; },
                 "command 21 (moments): field reserved[95]"},
        Mutation{"moments_len", [](auto& b) { b.cmd(kMoments).moments.len = 0; },
                 "command 21 (moments): field len"},
        Mutation{"moments_outputs_overlap",
                 [](auto& b) { b.cmd(kMoments).moments.sq_addr = 55100 + 12; },
                 "command 21 (moments): field sq_addr: the mean output [55100, +16) and the sq "
                 "output [55112, +16) overlap"},
        Mutation{"fence_flag", [](auto& b) { b.cmd(kFence).hdr.flags = 4; },
                 "command 26 (fence): field flags: undefined flag bits 0x4"},
        Mutation{"missing_end",
                 [](auto& b) {
                   b.cmd(kEnd) = b.cmd(kEnd - 2);  // replace END by a NOP
                 },
                 "command 27 (nop): last command must be end"},
        Mutation{"end_not_last",
                 [](auto& b) {
                   b.cmd(kFence).hdr.opcode = NPU_OP_END;
                   b.cmd(kFence).hdr.flags = 0;
                   b.cmd(kFence).fence.value = 0;
                 },
                 "command 26 (end): end must be the last command (buffer has 28 commands)"}),
    [](const ::testing::TestParamInfo<Mutation>& p) { return std::string(p.param.name); });

TEST(Validate, SameEngineMaySignalRepeatedly) {
  CommandBufferBuilder b;
  b.sem_signal(NPU_ENGINE_DMA_IN, 3);
  b.sem_signal(NPU_ENGINE_DMA_IN, 3);
  b.sem_signal(NPU_ENGINE_DMA_IN, 3);  // three signals pay the waits' 2 + 1
  b.sem_wait(NPU_ENGINE_VECTOR, 3, 2);
  b.sem_wait(NPU_ENGINE_VECTOR, 3);
  auto r = run(b);
  EXPECT_TRUE(r) << r.error().message;
}

TEST(Validate, SmallerSramConfig) {
  auto b = every_opcode();
  DeviceConfig cfg;
  cfg.sram_size = 64 * 1024;
  auto r = run(b, cfg);
  ASSERT_TRUE(r) << r.error().message;
  b.cmd(kReduce).reduce.out_addr = 65530;
  EXPECT_EQ(fail_message(b, cfg),
            "command 20 (reduce): field out_addr: sram range [65530, 65546) outside 65536-byte "
            "sram");
}

TEST(Validate, FeatureSubsetDevice) {
  // An int8-only device runs int8 conv and integer vector ops, not fp32 matmul.
  DeviceConfig cfg;
  cfg.features = NPU_FEATURE_INT8;
  CommandBufferBuilder b;
  b.conv2d({.w_addr = 64,
            .out_addr = 128,
            .chan_addr = 256,
            .in_h = 4,
            .in_w = 4,
            .in_c = 4,
            .out_c = 4});
  b.requantize({.in_addr = 0, .out_addr = 512, .count = 16});
  b.activation({.func = NPU_ACT_RELU, .dtype = NPU_DTYPE_INT8, .shape = {1, 1, 1, 16}});
  auto r = run(b, cfg);
  ASSERT_TRUE(r) << r.error().message;
  b.matmul({.m = 1,
            .k = 1,
            .n = 1,
            .a_dtype = NPU_DTYPE_FP32,
            .b_dtype = NPU_DTYPE_FP32,
            .out_dtype = NPU_DTYPE_FP32});
  EXPECT_EQ(fail_message(b, cfg),
            "command buffer: field required_features: device lacks feature fp32");
}

TEST(Validate, FuzzedBuffersNeverCrash) {
  // Random single-byte corruptions of a valid program: validate must return, never crash.
  auto base = every_opcode().finish();
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  int rejected = 0;
  for (int i = 0; i < 5000; ++i) {
    auto buf = base;
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int f = 0; f < flips; ++f) {
      buf[next() % buf.size()] = static_cast<std::byte>(next() & 0xff);
    }
    auto r = validate(buf, {});
    if (!r) {
      ++rejected;
      EXPECT_FALSE(r.error().message.empty());
    }
  }
  EXPECT_GT(rejected, 0);
}

TEST(Validate, Names) {
  EXPECT_STREQ(opcode_name(NPU_OP_CONV2D), "conv2d");
  EXPECT_STREQ(opcode_name(NPU_OP_SCALE_SHIFT), "scale_shift");
  EXPECT_STREQ(opcode_name(0xee), "unknown");
  EXPECT_STREQ(engine_name(NPU_ENGINE_DMA_OUT), "dma_out");
  EXPECT_STREQ(engine_name(7), "unknown");
}

}  // namespace
}  // namespace npu::isa

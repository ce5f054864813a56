// ISA 1.1 through the device, checked against the reference: converting DMAs bit-exact (and
// against npu/isa/half.h element by element), fp16/bf16 CONV2D and MATMUL to the fp32
// accumulation tolerance (a half output may differ by one unit in the last place where the
// fp32 sums, accumulated in another order, straddle a rounding boundary).
#include <bit>
#include <limits>

#include "e2e_fixture.h"
#include "npu/isa/dtype.h"
#include "npu/isa/half.h"

namespace npu::e2e {
namespace {

std::vector<uint16_t> random_halves(uint8_t dt, size_t n, float lo, float hi, uint32_t seed) {
  const std::vector<float> f = random_floats(n, lo, hi, seed);
  std::vector<uint16_t> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = isa::fp32_to_half(dt, f[i]);
  return h;
}

uint16_t half_at(const std::vector<std::byte>& v, size_t i) {
  uint16_t h;
  std::memcpy(&h, v.data() + 2 * i, 2);
  return h;
}

/// Half outputs: equal, both NaN, one unit in the last place apart (same sign), or within
/// 1e-5 of each other (around zero).
void expect_close_half(const Outcome& o, uint8_t dt) {
  ASSERT_EQ(o.device.size(), o.reference.size());
  expect_nontrivial(o);
  size_t bad = 0, off_by_one = 0;
  for (size_t i = 0; i < o.device.size() / 2; ++i) {
    const uint16_t d = half_at(o.device, i), r = half_at(o.reference, i);
    const float df = isa::half_to_fp32(dt, d), rf = isa::half_to_fp32(dt, r);
    if (d == r || (std::isnan(df) && std::isnan(rf))) continue;
    const bool ulp = (d & 0x8000) == (r & 0x8000) && (d > r ? d - r : r - d) == 1;
    off_by_one += ulp;
    if (!ulp && !(std::fabs(df - rf) <= 1e-5f) && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": device " << df << " reference " << rf;
  }
  EXPECT_EQ(bad, 0u);
  // Rounding flips are rare: most outputs agree bit for bit.
  EXPECT_LE(off_by_one, o.device.size() / 2 / 20 + 1);
}

// ---------------------------------------------------------------------------------- conv

struct HalfConvCase {
  const char* name;
  uint16_t h, w, c, oc, kh, kw;
  uint8_t stride, dil, pt, pl, pb, pr;
  uint16_t groups;
};

const HalfConvCase kHalfConvCases[] = {
    {"k3_pad1", 9, 11, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1},
    {"k3_stride2_dilation2", 12, 11, 5, 7, 3, 3, 2, 2, 2, 1, 1, 2, 1},
    {"grouped", 7, 7, 8, 12, 3, 3, 1, 1, 1, 1, 1, 1, 4},
    {"depthwise", 10, 10, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16},
    {"depthwise_multiplier2", 6, 7, 4, 8, 3, 3, 1, 1, 1, 1, 1, 1, 4},
    {"pointwise", 6, 6, 32, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {"deep_k", 8, 8, 64, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1},
};

Outcome run_conv(const HalfConvCase& k, uint8_t dt, uint8_t out_dt, bool bias_relu, uint32_t seed) {
  const uint32_t oh =
      isa::CommandBufferBuilder::conv_out_size(k.h, k.pt, k.pb, k.kh, k.dil, k.stride);
  const uint32_t ow =
      isa::CommandBufferBuilder::conv_out_size(k.w, k.pl, k.pr, k.kw, k.dil, k.stride);
  const size_t n_in = size_t(k.h) * k.w * k.c, n_w = size_t(k.oc) * k.kh * k.kw * (k.c / k.groups);
  Blob blob;
  const uint32_t in_addr = blob.add(random_halves(dt, n_in, -1, 1, seed));
  const uint32_t w_addr = blob.add(random_halves(dt, n_w, -0.5f, 0.5f, seed + 1));
  const uint32_t chan_addr = blob.add(random_floats(k.oc, -1, 1, seed + 2));
  const uint32_t out_addr = blob.end();
  const uint32_t out_size = oh * ow * k.oc * isa::dtype_size(out_dt);
  isa::Conv2dArgs a{.in_addr = in_addr,
                    .w_addr = w_addr,
                    .out_addr = out_addr,
                    .chan_addr = chan_addr,
                    .in_h = k.h,
                    .in_w = k.w,
                    .in_c = k.c,
                    .out_c = k.oc,
                    .k_h = k.kh,
                    .k_w = k.kw,
                    .groups = k.groups,
                    .stride_h = k.stride,
                    .stride_w = k.stride,
                    .dil_h = k.dil,
                    .dil_w = k.dil,
                    .pad_top = k.pt,
                    .pad_left = k.pl,
                    .pad_bottom = k.pb,
                    .pad_right = k.pr,
                    .in_dtype = dt,
                    .w_dtype = dt,
                    .out_dtype = out_dt,
                    .bias = bias_relu};
  if (bias_relu) a.fclamp_min = 0.0f, a.fclamp_max = 1.5f;
  return run_case(blob, out_addr, out_size, NPU_ENGINE_MATRIX,
                  [&](isa::CommandBufferBuilder& b) { b.conv2d(a); });
}

class HalfConvE2E : public ::testing::TestWithParam<HalfConvCase> {};

TEST_P(HalfConvE2E, Fp16ToFp16) {
  expect_close_half(run_conv(GetParam(), NPU_DTYPE_FP16, NPU_DTYPE_FP16, false, 31),
                    NPU_DTYPE_FP16);
}
TEST_P(HalfConvE2E, Fp16BiasClampToFp16) {
  expect_close_half(run_conv(GetParam(), NPU_DTYPE_FP16, NPU_DTYPE_FP16, true, 32), NPU_DTYPE_FP16);
}
TEST_P(HalfConvE2E, Fp16ToFp32) {
  expect_close(run_conv(GetParam(), NPU_DTYPE_FP16, NPU_DTYPE_FP32, true, 33));
}
TEST_P(HalfConvE2E, Bf16ToBf16) {
  expect_close_half(run_conv(GetParam(), NPU_DTYPE_BF16, NPU_DTYPE_BF16, true, 34), NPU_DTYPE_BF16);
}
TEST_P(HalfConvE2E, Bf16ToFp32) {
  expect_close(run_conv(GetParam(), NPU_DTYPE_BF16, NPU_DTYPE_FP32, false, 35));
}

INSTANTIATE_TEST_SUITE_P(Shapes, HalfConvE2E, ::testing::ValuesIn(kHalfConvCases),
                         [](const auto& p) { return std::string(p.param.name); });

// -------------------------------------------------------------------------------- matmul

struct HalfMatmulCase {
  const char* name;
  uint32_t m, k, n, batch;
  uint32_t a_bs, b_bs, out_bs;  // 0 with batch > 1 on b: broadcast
  bool transpose_b;
};

const HalfMatmulCase kHalfMatmulCases[] = {
    {"square", 16, 16, 16, 1, 256, 256, 256, false},
    {"tall_skinny", 37, 70, 5, 1, 37 * 70, 70 * 5, 37 * 5, false},
    {"batched_transpose_b", 9, 33, 12, 2, 9 * 33, 33 * 12, 9 * 12, true},
    {"broadcast_b", 5, 8, 6, 4, 5 * 8, 0, 5 * 6, false},
    {"strided_batches", 6, 10, 7, 3, 6 * 10 + 3, 10 * 7 + 1, 6 * 7 + 2, true},
};

Outcome run_matmul(const HalfMatmulCase& c, uint8_t dt, uint8_t out_dt, bool bias, uint32_t seed) {
  const size_t na = size_t(c.batch - 1) * c.a_bs + size_t(c.m) * c.k;
  const size_t nb = size_t(c.batch - 1) * c.b_bs + size_t(c.k) * c.n;
  Blob blob;
  const uint32_t a_addr = blob.add(random_halves(dt, na, -1, 1, seed));
  const uint32_t b_addr = blob.add(random_halves(dt, nb, -1, 1, seed + 1));
  const uint32_t chan_addr = blob.add(random_floats(c.n, -1, 1, seed + 2));
  // The output region includes the gaps between strided batches: they must stay as loaded
  // (zero) on both sides.
  const uint32_t out_addr = blob.end();
  const uint32_t out_size = ((c.batch - 1) * c.out_bs + c.m * c.n) * isa::dtype_size(out_dt);
  blob.add(std::vector<std::byte>(out_size));
  isa::MatmulArgs a{.a_addr = a_addr,
                    .b_addr = b_addr,
                    .out_addr = out_addr,
                    .chan_addr = chan_addr,
                    .m = c.m,
                    .k = c.k,
                    .n = c.n,
                    .batch = c.batch,
                    .a_batch_stride = c.a_bs,
                    .b_batch_stride = c.b_bs,
                    .out_batch_stride = c.out_bs,
                    .a_dtype = dt,
                    .b_dtype = dt,
                    .out_dtype = out_dt,
                    .fclamp_min = bias ? -2.0f : -std::numeric_limits<float>::infinity(),
                    .bias = bias,
                    .transpose_b = c.transpose_b};
  return run_case(blob, out_addr, out_size, NPU_ENGINE_MATRIX,
                  [&](isa::CommandBufferBuilder& b) { b.matmul(a); });
}

class HalfMatmulE2E : public ::testing::TestWithParam<HalfMatmulCase> {};

TEST_P(HalfMatmulE2E, Fp16ToFp16) {
  expect_close_half(run_matmul(GetParam(), NPU_DTYPE_FP16, NPU_DTYPE_FP16, true, 41),
                    NPU_DTYPE_FP16);
}
TEST_P(HalfMatmulE2E, Fp16ToFp32) {
  expect_close(run_matmul(GetParam(), NPU_DTYPE_FP16, NPU_DTYPE_FP32, false, 42));
}
TEST_P(HalfMatmulE2E, Bf16ToBf16) {
  expect_close_half(run_matmul(GetParam(), NPU_DTYPE_BF16, NPU_DTYPE_BF16, false, 43),
                    NPU_DTYPE_BF16);
}
TEST_P(HalfMatmulE2E, Bf16ToFp32) {
  expect_close(run_matmul(GetParam(), NPU_DTYPE_BF16, NPU_DTYPE_FP32, true, 44));
}

INSTANTIATE_TEST_SUITE_P(Shapes, HalfMatmulE2E, ::testing::ValuesIn(kHalfMatmulCases),
                         [](const auto& p) { return std::string(p.param.name); });

// ----------------------------------------------------------------------------------- DMA

/// fp32 values that exercise fp16 rounding: ties to even both ways, just above/below ties,
/// overflow to inf, the largest finite, subnormals and their ties, underflow to zero, signed
/// zeros, infinities and NaNs.
std::vector<float> special_floats() {
  std::vector<float> v = {
      1.0f,
      1.0f + 0x1p-11f,             // tie between 1 and 1+2^-10: to even (1)
      1.0f + 3 * 0x1p-11f,         // tie: to even (1 + 2^-9)
      1.0f + 0x1p-11f + 0x1p-20f,  // just above a tie: up
      -(1.0f + 0x1p-11f),          // negative tie
      65504.0f,                    // largest fp16
      65519.0f,                    // rounds to 65504
      65520.0f,                    // rounds to inf
      1e6f,                        // overflow
      -1e6f,                       // -inf
      0x1p-14f,                    // smallest normal
      0x1p-24f,                    // smallest subnormal
      0x1.8p-24f,                  // subnormal tie -> even (2^-23)
      0x1p-25f,                    // half the smallest subnormal: tie to zero
      0x1.000002p-25f,             // just above: rounds up to 2^-24
      1e-10f,                      // underflow to zero
      -0.0f,
      0.0f,
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::quiet_NaN(),
      -std::numeric_limits<float>::quiet_NaN(),
      std::bit_cast<float>(0x7f800001u),  // signalling NaN: stays a NaN
      3.14159265f,
      -2.71828183f,
      0x1.fffffep+127f,  // largest fp32: inf in fp16, finite in bf16... rounds up
      1.00390625f,       // 1 + 2^-8: bf16 tie to even (1)
      1.01171875f,       // 1 + 3*2^-8: bf16 tie to even (1 + 2^-6)
      0x1p-130f,         // fp32 subnormal: bf16 keeps it
  };
  while (v.size() % 8 != 0) v.push_back(static_cast<float>(v.size()) * 0.1f);
  return v;
}

/// DMA_LOAD fp32 (every other element of a strided DRAM box) -> `dt` with padding, DMA_STORE
/// of the raw `dt` box and DMA_STORE `dt` -> fp32 of the same box, through device and reference.
void check_dma_round_trip(uint8_t dt) {
  const std::vector<float> vals = special_floats();
  const uint32_t x = 4, y = static_cast<uint32_t>(vals.size() / 8), z = 2;  // x*y*z == n
  // DRAM source: element (i, j, l) is value (l * y + j) * 4 + i at float 2 * that (x stride
  // 8 bytes); the odd floats between them must not be read.
  std::vector<float> src_vals(2 * vals.size(), 1e30f);
  for (size_t i = 0; i < vals.size(); ++i) src_vals[2 * i] = vals[i];
  std::vector<std::byte> src(4096 * 4), raw_dst(4096), wide_dst(4096 * 2), ref_raw(4096),
      ref_wide(4096 * 2);
  std::memcpy(src.data(), src_vals.data(), src_vals.size() * 4);
  const uint16_t pad = isa::fp32_to_half(dt, -7.5f);
  const uint32_t px = x + 2, py = y + 1, pz = z;  // padded box: x 1+1, y 0+1
  const uint64_t src_va = 0x1'0000'0000ull, raw_va = 0x2'0000'0000ull, wide_va = 0x3'0000'0000ull;
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = src_va,
              .sram = 64,
              .elem_size = 2,
              .size = {x, y, z},
              .dram_stride = std::array<uint32_t, 3>{8, 32, 32 * y},
              .pad_before = {1, 0, 0},
              .pad_after = {1, 1, 0},
              .pad_value = pad,
              .dram_dtype = NPU_DTYPE_FP32,
              .sram_dtype = dt});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
  b.dma_store({.dram = raw_va, .sram = 64, .elem_size = 2, .size = {px * py * pz, 1, 1}});
  // fp32 out with a strided DRAM side: x stride 8 bytes (every other float).
  b.dma_store({.dram = wide_va,
               .sram = 64,
               .elem_size = 2,
               .size = {px, py, pz},
               .dram_stride = std::array<uint32_t, 3>{8, 8 * px, 8 * px * py},
               .dram_dtype = NPU_DTYPE_FP32,
               .sram_dtype = dt});
  const auto bytes = b.finish();
  isa::DeviceConfig cfg;
  auto prog = isa::validate(bytes, cfg);
  ASSERT_TRUE(prog) << prog.error().message;
  EXPECT_EQ(prog->header.required_features, uint64_t{NPU_FEATURE_FP16});

  emu::Device dev(cfg);
  emu::Mmu mmu;
  ASSERT_TRUE(mmu.map({src_va, src.size(), src.data(), isa::kRead}));
  ASSERT_TRUE(mmu.map({raw_va, raw_dst.size(), raw_dst.data(), isa::kWrite}));
  ASSERT_TRUE(mmu.map({wide_va, wide_dst.size(), wide_dst.data(), isa::kWrite}));
  const emu::JobResult r = dev.run(*prog, mmu);
  ASSERT_EQ(r.status, DRM_NPU_JOB_OK) << "fault at command " << r.fault.cmd_index;

  std::vector<std::byte> sram(cfg.sram_size), rsrc = src;
  ref::FlatDram dram;
  ASSERT_TRUE(dram.map(src_va, rsrc));
  ASSERT_TRUE(dram.map(raw_va, ref_raw));
  ASSERT_TRUE(dram.map(wide_va, ref_wide));
  auto rr = ref::run_program(*prog, sram, dram);
  ASSERT_TRUE(rr) << rr.error().message;

  EXPECT_EQ(raw_dst, ref_raw);
  EXPECT_EQ(wide_dst, ref_wide);
  // Element by element against half.h.
  size_t checked = 0;
  for (uint32_t l = 0; l < pz; ++l)
    for (uint32_t j = 0; j < py; ++j)
      for (uint32_t i = 0; i < px; ++i) {
        const size_t e = (size_t(l) * py + j) * px + i;
        const bool inside = i >= 1 && i < 1 + x && j < y;
        const uint16_t want =
            inside ? isa::fp32_to_half(dt, vals[(size_t(l) * y + j) * 4 + (i - 1)]) : pad;
        const uint16_t got = half_at(raw_dst, e);
        EXPECT_EQ(got, want) << "element " << e;
        float wide;
        std::memcpy(&wide, wide_dst.data() + 8 * e, 4);
        const float want_wide = isa::half_to_fp32(dt, want);
        if (std::isnan(want_wide))
          EXPECT_TRUE(std::isnan(wide)) << "element " << e;
        else
          EXPECT_EQ(std::bit_cast<uint32_t>(wide), std::bit_cast<uint32_t>(want_wide))
              << "element " << e;
        // The gaps of the strided store stay untouched.
        float gap;
        std::memcpy(&gap, wide_dst.data() + 8 * e + 4, 4);
        EXPECT_EQ(std::bit_cast<uint32_t>(gap), 0u) << "element " << e;
        ++checked;
      }
  EXPECT_EQ(checked, size_t(px) * py * pz);
}

TEST(HalfDmaE2E, Fp32ToFp16AndBackIsBitExact) {
  check_dma_round_trip(NPU_DTYPE_FP16);
  // Spot checks of the rounding rules themselves.
  EXPECT_EQ(isa::fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(isa::fp32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(isa::fp32_to_fp16(65520.0f), 0x7c00);
  EXPECT_EQ(isa::fp32_to_fp16(0x1.8p-24f), 0x0002);
  EXPECT_EQ(isa::fp32_to_fp16(0x1p-25f), 0x0000);
}

TEST(HalfDmaE2E, Fp32ToBf16AndBackIsBitExact) {
  check_dma_round_trip(NPU_DTYPE_BF16);
}

TEST(HalfDmaE2E, Fp16ToBf16ConvertsThroughFp32) {
  // fp16 in DRAM -> bf16 in SRAM -> fp32 in DRAM: each step as half.h defines it.
  const std::vector<uint16_t> h = {0x3c00, 0x3c01, 0x3fff, 0x7bff, 0x0001, 0x8400, 0x7c00, 0x7e00};
  std::vector<std::byte> src(4096), dst(4096), ref_dst(4096);
  std::memcpy(src.data(), h.data(), h.size() * 2);
  const uint64_t src_va = 0x1'0000'0000ull, dst_va = 0x2'0000'0000ull;
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = src_va,
              .sram = 0,
              .elem_size = 2,
              .size = {8, 1, 1},
              .dram_dtype = NPU_DTYPE_FP16,
              .sram_dtype = NPU_DTYPE_BF16});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
  b.dma_store({.dram = dst_va,
               .sram = 0,
               .elem_size = 2,
               .size = {8, 1, 1},
               .dram_dtype = NPU_DTYPE_FP32,
               .sram_dtype = NPU_DTYPE_BF16});
  const auto bytes = b.finish();
  isa::DeviceConfig cfg;
  auto prog = isa::validate(bytes, cfg);
  ASSERT_TRUE(prog) << prog.error().message;
  emu::Device dev(cfg);
  emu::Mmu mmu;
  ASSERT_TRUE(mmu.map({src_va, src.size(), src.data(), isa::kRead}));
  ASSERT_TRUE(mmu.map({dst_va, dst.size(), dst.data(), isa::kWrite}));
  ASSERT_EQ(dev.run(*prog, mmu).status, DRM_NPU_JOB_OK);
  std::vector<std::byte> sram(cfg.sram_size), rsrc = src;
  ref::FlatDram dram;
  ASSERT_TRUE(dram.map(src_va, rsrc));
  ASSERT_TRUE(dram.map(dst_va, ref_dst));
  ASSERT_TRUE(ref::run_program(*prog, sram, dram));
  EXPECT_EQ(dst, ref_dst);
  for (size_t i = 0; i < h.size(); ++i) {
    float got;
    std::memcpy(&got, dst.data() + 4 * i, 4);
    const float want = isa::bf16_to_fp32(isa::fp32_to_bf16(isa::fp16_to_fp32(h[i])));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << i;
    else
      EXPECT_EQ(got, want) << i;
  }
}

TEST(HalfCopyE2E, ActivationCopyAndTransposeMoveHalfBits) {
  Blob blob;
  const uint32_t in = blob.add(random_halves(NPU_DTYPE_FP16, 2 * 3 * 4 * 5, -4, 4, 51));
  const uint32_t mid = blob.end();
  blob.add(std::vector<uint16_t>(2 * 3 * 4 * 5));
  const uint32_t out = blob.end();
  const Outcome o = run_case(blob, out, 2 * 3 * 4 * 5 * 2, NPU_ENGINE_VECTOR, [&](auto& b) {
    b.activation({.func = NPU_ACT_COPY,
                  .dtype = NPU_DTYPE_FP16,
                  .shape = {2, 3, 4, 5},
                  .in_addr = in,
                  .out_addr = mid});
    b.transpose({.in_addr = mid,
                 .out_addr = out,
                 .in_shape = {2, 3, 4, 5},
                 .perm = {3, 1, 0, 2},
                 .elem_size = 2});
  });
  expect_exact(o);
}

}  // namespace
}  // namespace npu::e2e

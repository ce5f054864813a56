// CONV2D and MATMUL through the device, checked against the reference: int8/uint8 paths
// bit-exact, fp32 to tolerance.
#include "e2e_fixture.h"
#include "npu/ref/scalar.h"

namespace npu::e2e {
namespace {

struct ConvCase {
  const char* name;
  uint16_t h, w, c, oc, kh, kw;
  uint8_t stride, dil, pt, pl, pb, pr;
  uint16_t groups;
  uint8_t in_dt, w_dt, out_dt;
};

// Shapes: padding, strides, dilation, asymmetric padding, groups, depthwise, 1x1, 1-D.
const ConvCase kConvCases[] = {
    {"k3_pad1", 9, 11, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0},
    {"k3_stride2", 12, 10, 5, 7, 3, 3, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0},
    {"k3_dilation2", 11, 11, 4, 6, 3, 3, 1, 2, 2, 2, 2, 2, 1, 0, 0, 0},
    {"k5_asymmetric_pad", 8, 9, 3, 4, 5, 5, 1, 1, 0, 2, 3, 1, 1, 0, 0, 0},
    {"grouped", 7, 7, 8, 12, 3, 3, 1, 1, 1, 1, 1, 1, 4, 0, 0, 0},
    {"depthwise", 10, 10, 16, 16, 3, 3, 1, 1, 1, 1, 1, 1, 16, 0, 0, 0},
    {"depthwise_stride2", 9, 9, 8, 8, 3, 3, 2, 1, 1, 1, 1, 1, 8, 0, 0, 0},
    {"pointwise", 6, 6, 32, 24, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0},
    {"conv1d", 1, 20, 6, 5, 1, 4, 1, 1, 0, 1, 0, 2, 1, 0, 0, 0},
    {"k7_stride3_pad3", 16, 16, 3, 8, 7, 7, 3, 1, 3, 3, 3, 3, 1, 0, 0, 0},
};

uint32_t elem(uint8_t dt) {
  return dt == NPU_DTYPE_INT8 || dt == NPU_DTYPE_UINT8 ? 1 : 4;
}

Outcome run_conv(const ConvCase& k, uint8_t in_dt, uint8_t w_dt, uint8_t out_dt, uint32_t seed,
                 bool relu) {
  const bool fp = in_dt == NPU_DTYPE_FP32;
  const uint32_t oh =
      isa::CommandBufferBuilder::conv_out_size(k.h, k.pt, k.pb, k.kh, k.dil, k.stride);
  const uint32_t ow =
      isa::CommandBufferBuilder::conv_out_size(k.w, k.pl, k.pr, k.kw, k.dil, k.stride);
  const size_t n_in = size_t(k.h) * k.w * k.c, n_w = size_t(k.oc) * k.kh * k.kw * (k.c / k.groups);
  Blob blob;
  uint32_t in_addr, w_addr, chan_addr;
  int32_t in_zp = 0, out_zp = 0;
  if (fp) {
    in_addr = blob.add(random_floats(n_in, -1, 1, seed));
    w_addr = blob.add(random_floats(n_w, -0.5f, 0.5f, seed + 1));
    chan_addr = blob.add(random_floats(k.oc, -1, 1, seed + 2));
  } else {
    const bool in_u = in_dt == NPU_DTYPE_UINT8, w_u = w_dt == NPU_DTYPE_UINT8;
    in_addr = in_u ? blob.add(random_ints<uint8_t>(n_in, 0, 255, seed))
                   : blob.add(random_ints<int8_t>(n_in, -128, 127, seed));
    w_addr = w_u ? blob.add(random_ints<uint8_t>(n_w, 0, 255, seed + 1))
                 : blob.add(random_ints<int8_t>(n_w, -128, 127, seed + 1));
    in_zp = in_u ? 131 : -7;
    out_zp = out_dt == NPU_DTYPE_UINT8 ? 120 : (out_dt == NPU_DTYPE_INT8 ? -5 : 0);
    std::mt19937 rng(seed + 2);
    std::vector<npu_chan_qparams> q(k.oc);
    for (auto& p : q) {
      const double scale = std::uniform_real_distribution<double>(1e-4, 4e-3)(rng);
      const auto m = ref::quantize_multiplier(scale);
      p = {std::uniform_int_distribution<int>(-3000, 3000)(rng), m.multiplier, m.shift,
           w_u ? std::uniform_int_distribution<int>(100, 150)(rng)
               : std::uniform_int_distribution<int>(-4, 4)(rng)};
    }
    chan_addr = blob.add(q);
  }
  const uint32_t out_addr = blob.end();
  const uint32_t out_size = oh * ow * k.oc * elem(out_dt);
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
                    .in_dtype = in_dt,
                    .w_dtype = w_dt,
                    .out_dtype = out_dt,
                    .in_zp = in_zp,
                    .out_zp = out_zp,
                    .bias = fp};
  if (relu && fp) a.fclamp_min = 0.0f;
  if (relu && !fp) a.clamp_min = out_zp;
  return run_case(blob, out_addr, out_size, NPU_ENGINE_MATRIX,
                  [&](isa::CommandBufferBuilder& b) { b.conv2d(a); });
}

class ConvE2E : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvE2E, Int8IsBitExact) {
  expect_exact(run_conv(GetParam(), NPU_DTYPE_INT8, NPU_DTYPE_INT8, NPU_DTYPE_INT8, 11, false));
}
TEST_P(ConvE2E, Int8WithReluIsBitExact) {
  expect_exact(run_conv(GetParam(), NPU_DTYPE_INT8, NPU_DTYPE_INT8, NPU_DTYPE_INT8, 12, true));
}
TEST_P(ConvE2E, Uint8IsBitExact) {
  expect_exact(run_conv(GetParam(), NPU_DTYPE_UINT8, NPU_DTYPE_UINT8, NPU_DTYPE_UINT8, 13, false));
}
TEST_P(ConvE2E, Int32AccumulatorsAreBitExact) {
  expect_exact(run_conv(GetParam(), NPU_DTYPE_UINT8, NPU_DTYPE_INT8, NPU_DTYPE_INT32, 14, false));
}
TEST_P(ConvE2E, Fp32MatchesReference) {
  expect_close(run_conv(GetParam(), NPU_DTYPE_FP32, NPU_DTYPE_FP32, NPU_DTYPE_FP32, 15, false));
}
TEST_P(ConvE2E, Fp32WithReluMatchesReference) {
  expect_close(run_conv(GetParam(), NPU_DTYPE_FP32, NPU_DTYPE_FP32, NPU_DTYPE_FP32, 16, true));
}

INSTANTIATE_TEST_SUITE_P(Shapes, ConvE2E, ::testing::ValuesIn(kConvCases),
                         [](const auto& p) { return std::string(p.param.name); });

struct MatmulCase {
  const char* name;
  uint32_t m, k, n, batch;
  bool broadcast_b, transpose_b;
};

const MatmulCase kMatmulCases[] = {
    {"square", 16, 16, 16, 1, false, false},  {"tall_skinny", 37, 70, 5, 1, false, false},
    {"vector", 1, 300, 10, 1, false, false},  {"batched", 7, 9, 11, 3, false, false},
    {"broadcast_b", 5, 8, 6, 4, true, false}, {"transpose_b", 9, 33, 12, 2, false, true},
};

Outcome run_matmul(const MatmulCase& c, uint8_t a_dt, uint8_t b_dt, uint8_t out_dt, uint32_t seed) {
  const bool fp = a_dt == NPU_DTYPE_FP32;
  const size_t na = size_t(c.batch) * c.m * c.k,
               nb = size_t(c.broadcast_b ? 1 : c.batch) * c.k * c.n;
  Blob blob;
  uint32_t a_addr, b_addr, chan_addr;
  int32_t a_zp = 0, out_zp = 0;
  if (fp) {
    a_addr = blob.add(random_floats(na, -1, 1, seed));
    b_addr = blob.add(random_floats(nb, -1, 1, seed + 1));
    chan_addr = blob.add(random_floats(c.n, -1, 1, seed + 2));
  } else {
    a_addr = a_dt == NPU_DTYPE_UINT8 ? blob.add(random_ints<uint8_t>(na, 0, 255, seed))
                                     : blob.add(random_ints<int8_t>(na, -128, 127, seed));
    b_addr = blob.add(random_ints<int8_t>(nb, -128, 127, seed + 1));
    a_zp = a_dt == NPU_DTYPE_UINT8 ? 128 : 3;
    out_zp = out_dt == NPU_DTYPE_INT8 ? 10 : 0;
    std::vector<npu_chan_qparams> q(c.n);
    std::mt19937 rng(seed + 3);
    for (auto& p : q) {
      const auto m =
          ref::quantize_multiplier(std::uniform_real_distribution<double>(1e-4, 2e-3)(rng));
      p = {std::uniform_int_distribution<int>(-500, 500)(rng), m.multiplier, m.shift,
           std::uniform_int_distribution<int>(-2, 2)(rng)};
    }
    chan_addr = blob.add(q);
  }
  const uint32_t out_addr = blob.end();
  const uint32_t out_size = c.batch * c.m * c.n * elem(out_dt);
  isa::MatmulArgs a{.a_addr = a_addr,
                    .b_addr = b_addr,
                    .out_addr = out_addr,
                    .chan_addr = chan_addr,
                    .m = c.m,
                    .k = c.k,
                    .n = c.n,
                    .batch = c.batch,
                    .a_dtype = a_dt,
                    .b_dtype = b_dt,
                    .out_dtype = out_dt,
                    .a_zp = a_zp,
                    .out_zp = out_zp,
                    .bias = fp,
                    .transpose_b = c.transpose_b};
  if (c.broadcast_b) a.b_batch_stride = 0;
  return run_case(blob, out_addr, out_size, NPU_ENGINE_MATRIX,
                  [&](isa::CommandBufferBuilder& b) { b.matmul(a); });
}

class MatmulE2E : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(MatmulE2E, Int8IsBitExact) {
  expect_exact(run_matmul(GetParam(), NPU_DTYPE_INT8, NPU_DTYPE_INT8, NPU_DTYPE_INT8, 21));
}
TEST_P(MatmulE2E, Uint8ToInt32IsBitExact) {
  expect_exact(run_matmul(GetParam(), NPU_DTYPE_UINT8, NPU_DTYPE_INT8, NPU_DTYPE_INT32, 22));
}
TEST_P(MatmulE2E, Fp32MatchesReference) {
  expect_close(run_matmul(GetParam(), NPU_DTYPE_FP32, NPU_DTYPE_FP32, NPU_DTYPE_FP32, 23));
}

INSTANTIATE_TEST_SUITE_P(Shapes, MatmulE2E, ::testing::ValuesIn(kMatmulCases),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace npu::e2e

// Every vector-engine command through the device, checked against the reference.
#include "e2e_fixture.h"

namespace npu::e2e {
namespace {

constexpr std::array<uint32_t, 4> kShape = {2, 3, 5, 7};
constexpr uint32_t kCount = 2 * 3 * 5 * 7;

Blob typed_operands(uint8_t dtype, uint32_t n, uint32_t seed, uint32_t& a, uint32_t& b,
                    uint32_t n_b) {
  Blob blob;
  if (dtype == NPU_DTYPE_FP32) {
    a = blob.add(random_floats(n, -3, 3, seed));
    auto bv = random_floats(n_b, -3, 3, seed + 1);
    for (auto& x : bv)
      if (std::fabs(x) < 0.05f) x = 0.5f;  // keep DIV well conditioned
    b = blob.add(bv);
  } else if (dtype == NPU_DTYPE_INT32) {
    a = blob.add(random_ints<int32_t>(n, -100000, 100000, seed));
    b = blob.add(random_ints<int32_t>(n_b, -300, 300, seed + 1));  // includes 0 divisors
  } else {
    a = blob.add(random_ints<int8_t>(n, -128, 127, seed));
    b = blob.add(random_ints<int8_t>(n_b, -128, 127, seed + 1));
  }
  return blob;
}

void check(const Outcome& o, uint8_t dtype) {
  if (dtype == NPU_DTYPE_FP32)
    expect_close(o, 1e-6f, 1e-6f);
  else
    expect_exact(o);
}

uint32_t esize(uint8_t dtype) {
  return dtype == NPU_DTYPE_INT8 || dtype == NPU_DTYPE_UINT8 ? 1 : 4;
}

TEST(VectorE2E, EltwiseEveryOpAndDtype) {
  for (uint8_t op = NPU_ELTWISE_ADD; op <= NPU_ELTWISE_PRELU; ++op) {
    for (uint8_t dt : {NPU_DTYPE_FP32, NPU_DTYPE_INT32, NPU_DTYPE_INT8}) {
      if (dt != NPU_DTYPE_FP32 && (op == NPU_ELTWISE_POW || op == NPU_ELTWISE_PRELU)) continue;
      SCOPED_TRACE(testing::Message() << "op " << int(op) << " dtype " << int(dt));
      uint32_t a, b;
      Blob blob = typed_operands(dt, kCount, 100 + op, a, b, kCount);
      const uint32_t out = blob.end();
      check(run_case(blob, out, kCount * esize(dt), NPU_ENGINE_VECTOR,
                     [&](isa::CommandBufferBuilder& cb) {
                       cb.eltwise({.op = op,
                                   .dtype = dt,
                                   .shape = kShape,
                                   .a_addr = a,
                                   .b_addr = b,
                                   .out_addr = out});
                     }),
            dt);
    }
  }
}

TEST(VectorE2E, EltwiseBroadcastsThroughZeroStrides) {
  for (uint8_t dt : {NPU_DTYPE_FP32, NPU_DTYPE_INT8}) {
    uint32_t a, b;
    Blob blob = typed_operands(dt, kCount, 7, a, b, 5);  // b has shape [1,1,5,1]
    const uint32_t out = blob.end();
    check(run_case(blob, out, kCount * esize(dt), NPU_ENGINE_VECTOR,
                   [&](isa::CommandBufferBuilder& cb) {
                     cb.eltwise({.op = NPU_ELTWISE_MUL,
                                 .dtype = dt,
                                 .shape = kShape,
                                 .a_addr = a,
                                 .b_addr = b,
                                 .b_stride = std::array<uint32_t, 4>{0, 0, 1, 0},
                                 .out_addr = out});
                   }),
          dt);
  }
}

TEST(VectorE2E, ActivationEveryFunction) {
  for (uint8_t f = NPU_ACT_COPY; f <= NPU_ACT_MAX; ++f) {
    SCOPED_TRACE(testing::Message() << "func " << int(f));
    Blob blob;
    auto v = random_floats(kCount, -4, 4, 200 + f);
    if (f == NPU_ACT_LOG || f == NPU_ACT_SQRT)
      for (auto& x : v) x = std::fabs(x) + 0.01f;
    const uint32_t in = blob.add(v), out = blob.end();
    check(run_case(blob, out, kCount * 4, NPU_ENGINE_VECTOR,
                   [&](isa::CommandBufferBuilder& cb) {
                     cb.activation({.func = f,
                                    .dtype = NPU_DTYPE_FP32,
                                    .shape = kShape,
                                    .in_addr = in,
                                    .out_addr = out,
                                    .alpha = 0.2f,
                                    .beta = f == NPU_ACT_CLIP ? 1.5f : 0.5f});
                   }),
          NPU_DTYPE_FP32);
  }
}

TEST(VectorE2E, IntegerActivationsAndTransposedViews) {
  for (uint8_t dt : {NPU_DTYPE_INT8, NPU_DTYPE_INT32}) {
    for (uint8_t f : {NPU_ACT_COPY, NPU_ACT_RELU, NPU_ACT_CLIP, NPU_ACT_ABS, NPU_ACT_NEG}) {
      SCOPED_TRACE(testing::Message() << "func " << int(f) << " dtype " << int(dt));
      uint32_t a, unused;
      Blob blob = typed_operands(dt, kCount, 300 + f, a, unused, 1);
      const uint32_t out = blob.end();
      // Read the input through a permuted view: a strided copy is a layout change.
      check(run_case(blob, out, kCount * esize(dt), NPU_ENGINE_VECTOR,
                     [&](isa::CommandBufferBuilder& cb) {
                       cb.activation({.func = f,
                                      .dtype = dt,
                                      .shape = {2, 7, 5, 3},
                                      .in_addr = a,
                                      .in_stride = std::array<uint32_t, 4>{105, 1, 7, 35},
                                      .out_addr = out,
                                      .alpha = -20.4f,
                                      .beta = 90.5f});
                     }),
            dt);
    }
  }
}

TEST(VectorE2E, PoolingMaxAvgGlobal) {
  struct P {
    uint8_t kind, dtype;
    uint16_t k, stride, pad;
    bool count_pad;
  };
  const P cases[] = {{NPU_POOL_MAX, NPU_DTYPE_FP32, 3, 2, 1, false},
                     {NPU_POOL_MAX, NPU_DTYPE_INT8, 2, 2, 0, false},
                     {NPU_POOL_MAX, NPU_DTYPE_UINT8, 3, 1, 1, false},
                     {NPU_POOL_AVG, NPU_DTYPE_FP32, 3, 2, 1, false},
                     {NPU_POOL_AVG, NPU_DTYPE_FP32, 3, 2, 1, true},
                     {NPU_POOL_AVG, NPU_DTYPE_INT8, 3, 1, 1, false},
                     {NPU_POOL_AVG, NPU_DTYPE_UINT8, 2, 2, 0, true},
                     {NPU_POOL_AVG, NPU_DTYPE_INT8, 9, 1, 0, false},   // global average
                     {NPU_POOL_MAX, NPU_DTYPE_FP32, 9, 1, 0, false}};  // global max
  const uint16_t h = 9, w = 9, c = 6;
  for (const P& p : cases) {
    SCOPED_TRACE(testing::Message()
                 << "kind " << int(p.kind) << " dtype " << int(p.dtype) << " k " << p.k);
    Blob blob;
    const uint32_t n = h * w * c;
    const uint32_t in = p.dtype == NPU_DTYPE_FP32 ? blob.add(random_floats(n, -5, 5, 400))
                        : p.dtype == NPU_DTYPE_INT8
                            ? blob.add(random_ints<int8_t>(n, -128, 127, 401))
                            : blob.add(random_ints<uint8_t>(n, 0, 255, 402));
    const uint32_t oh = isa::CommandBufferBuilder::conv_out_size(h, p.pad, p.pad, p.k, 1, p.stride);
    const uint32_t ow = isa::CommandBufferBuilder::conv_out_size(w, p.pad, p.pad, p.k, 1, p.stride);
    const uint32_t out = blob.end();
    check(run_case(blob, out, oh * ow * c * esize(p.dtype), NPU_ENGINE_VECTOR,
                   [&](isa::CommandBufferBuilder& cb) {
                     cb.pool({.kind = p.kind,
                              .dtype = p.dtype,
                              .in_addr = in,
                              .out_addr = out,
                              .in_h = h,
                              .in_w = w,
                              .channels = c,
                              .k_h = p.k,
                              .k_w = p.k,
                              .stride_h = static_cast<uint8_t>(p.stride),
                              .stride_w = static_cast<uint8_t>(p.stride),
                              .pad_top = static_cast<uint8_t>(p.pad),
                              .pad_left = static_cast<uint8_t>(p.pad),
                              .pad_bottom = static_cast<uint8_t>(p.pad),
                              .pad_right = static_cast<uint8_t>(p.pad),
                              .count_pad = p.count_pad});
                   }),
          p.dtype);
  }
}

TEST(VectorE2E, SoftmaxAndLogSoftmax) {
  for (bool log : {false, true}) {
    Blob blob;
    const uint32_t in = blob.add(random_floats(6 * 33, -20, 20, 500)), out = blob.end();
    check(run_case(blob, out, 6 * 33 * 4, NPU_ENGINE_VECTOR,
                   [&](isa::CommandBufferBuilder& cb) {
                     cb.softmax({.in_addr = in, .out_addr = out, .rows = 6, .len = 33, .log = log});
                   }),
          NPU_DTYPE_FP32);
  }
}

TEST(VectorE2E, ScaleShift) {
  Blob blob;
  const uint32_t in = blob.add(random_floats(10 * 12, -2, 2, 600));
  const uint32_t scale = blob.add(random_floats(12, 0.5f, 2, 601));
  const uint32_t shift = blob.add(random_floats(12, -1, 1, 602));
  const uint32_t out = blob.end();
  check(run_case(blob, out, 10 * 12 * 4, NPU_ENGINE_VECTOR,
                 [&](isa::CommandBufferBuilder& cb) {
                   cb.scale_shift({.in_addr = in,
                                   .out_addr = out,
                                   .scale_addr = scale,
                                   .shift_addr = shift,
                                   .outer = 10,
                                   .channels = 12});
                 }),
        NPU_DTYPE_FP32);
}

TEST(VectorE2E, QuantizeDequantizeRequantize) {
  for (uint8_t dt : {NPU_DTYPE_INT8, NPU_DTYPE_UINT8}) {
    for (uint32_t channels : {1u, 5u}) {
      SCOPED_TRACE(testing::Message() << "dtype " << int(dt) << " channels " << channels);
      // QUANTIZE, with exact ties (k + 0.5) * scale in the data.
      Blob blob;
      auto v = random_floats(kCount, -6, 6, 700);
      for (uint32_t i = 0; i < 20; ++i) v[i] = (float(i) - 10.0f + 0.5f) * 0.25f;
      const uint32_t in = blob.add(v);
      std::vector<npu_qparam> qp;
      for (uint32_t c = 0; c < channels; ++c)
        qp.push_back({0.05f + 0.01f * c, int32_t(c) - 2 + (dt == NPU_DTYPE_UINT8 ? 128 : 0)});
      const uint32_t params = blob.add(qp);
      const uint32_t out = blob.end();
      const isa::QuantArgs q{.in_addr = in,
                             .out_addr = out,
                             .count = kCount,
                             .channels = channels,
                             .inner = 7,
                             .params_addr = params,
                             .scale = 0.25f,
                             .zp = dt == NPU_DTYPE_UINT8 ? 128 : -1,
                             .dtype = dt};
      expect_exact(run_case(blob, out, kCount, NPU_ENGINE_VECTOR,
                            [&](isa::CommandBufferBuilder& cb) { cb.quantize(q); }));
    }
  }
  for (uint8_t dt : {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT32}) {
    Blob blob;
    const uint32_t in = dt == NPU_DTYPE_INT8 ? blob.add(random_ints<int8_t>(kCount, -128, 127, 710))
                        : dt == NPU_DTYPE_UINT8
                            ? blob.add(random_ints<uint8_t>(kCount, 0, 255, 711))
                            : blob.add(random_ints<int32_t>(kCount, -70000, 70000, 712));
    std::vector<npu_qparam> qp = {{0.1f, 3}, {0.02f, -1}, {1.5f, 0}};
    const uint32_t params = blob.add(qp), out = blob.end();
    check(run_case(blob, out, kCount * 4, NPU_ENGINE_VECTOR,
                   [&](isa::CommandBufferBuilder& cb) {
                     cb.dequantize({.in_addr = in,
                                    .out_addr = out,
                                    .count = kCount,
                                    .channels = 3,
                                    .inner = 5,
                                    .params_addr = params,
                                    .dtype = dt});
                   }),
          NPU_DTYPE_FP32);
    const uint32_t out2 = blob.end();
    expect_exact(
        run_case(blob, out2, kCount, NPU_ENGINE_VECTOR, [&](isa::CommandBufferBuilder& cb) {
          cb.requantize({.in_addr = in,
                         .out_addr = out2,
                         .count = kCount,
                         .multiplier = 1518500250,
                         .shift = 33,
                         .in_zp = 2,
                         .out_zp = -3,
                         .in_dtype = dt,
                         .out_dtype = NPU_DTYPE_INT8});
        }));
  }
}

TEST(VectorE2E, TransposeEveryElementSize) {
  const std::array<std::array<uint8_t, 4>, 4> perms = {
      {{0, 2, 3, 1}, {0, 3, 1, 2}, {3, 2, 1, 0}, {1, 0, 2, 3}}};
  for (uint32_t es : {1u, 2u, 4u}) {
    for (const auto& perm : perms) {
      Blob blob;
      const uint32_t in = blob.add(random_ints<uint8_t>(kCount * es, 0, 255, 800 + es));
      const uint32_t out = blob.end();
      expect_exact(
          run_case(blob, out, kCount * es, NPU_ENGINE_VECTOR, [&](isa::CommandBufferBuilder& cb) {
            cb.transpose({.in_addr = in,
                          .out_addr = out,
                          .in_shape = kShape,
                          .perm = perm,
                          .elem_size = es});
          }));
    }
  }
}

TEST(VectorE2E, ReduceEveryKind) {
  for (uint8_t kind = NPU_REDUCE_SUM; kind <= NPU_REDUCE_MIN; ++kind) {
    Blob blob;
    const uint32_t in = blob.add(random_floats(4 * 9 * 6, -3, 3, 900 + kind)), out = blob.end();
    check(
        run_case(
            blob, out, 4 * 6 * 4, NPU_ENGINE_VECTOR,
            [&](isa::CommandBufferBuilder& cb) {
              cb.reduce(
                  {.kind = kind, .in_addr = in, .out_addr = out, .outer = 4, .len = 9, .inner = 6});
            }),
        NPU_DTYPE_FP32);
  }
}

}  // namespace
}  // namespace npu::e2e

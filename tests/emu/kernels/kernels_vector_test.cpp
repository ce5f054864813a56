// VECTOR-engine commands of npu_emu_kernels against per-element loops over npu/ref/scalar.h:
// bit-exact for every dtype (fp32 eltwise/activation share the scalar functions), softmax
// and reductions within float tolerance.
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <numeric>
#include <vector>

#include "cpu_isa.h"
#include "exp_f32.h"
#include "npu/emu/kernels.h"
#include "npu/ref/scalar.h"
#include "test_util.h"

namespace npu::emu::test {
namespace {

constexpr uint32_t kA = 0x1003, kB = 0x40001, kO = 0x80002, kP = 0xC0001;

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, 4) == 0;
}

npu_vtensor view(uint32_t addr, std::array<uint32_t, 4> st) {
  npu_vtensor v{};
  v.addr = addr;
  for (int i = 0; i < 4; ++i) v.stride[i] = st[static_cast<size_t>(i)];
  return v;
}

/// The ISA levels with their own vector loops (cpu_isa.h): the scalar rule and AVX-512.
constexpr kern::Isa kVectorIsas[] = {kern::Isa::Portable, kern::Isa::Avx512};

TEST(Eltwise, Fp32BroadcastEveryOp) {
  const uint32_t shape[4] = {2, 3, 4, 5};
  for (uint8_t op = NPU_ELTWISE_ADD; op <= NPU_ELTWISE_PRELU; ++op) {
    Sram s;
    auto a = random_floats(120, -2, 2), b = random_floats(15, 0.1f, 2);
    s.put(kA, a);
    s.put(kB, b);
    npu_cmd cmd = zero_cmd(NPU_OP_ELTWISE, NPU_ENGINE_VECTOR);
    auto& c = cmd.eltwise;
    c.op = op, c.dtype = NPU_DTYPE_FP32;
    std::copy(shape, shape + 4, c.shape);
    c.a = view(kA, {60, 20, 5, 1});
    c.b = view(kB, {0, 5, 0, 1});  // [1][3][1][5]
    c.out = view(kO, {60, 20, 5, 1});
    run_vector(cmd, s.span());
    const auto out = s.get<float>(kO, 120);
    for (uint32_t i0 = 0; i0 < 2; ++i0)
      for (uint32_t i1 = 0; i1 < 3; ++i1)
        for (uint32_t i2 = 0; i2 < 4; ++i2)
          for (uint32_t i3 = 0; i3 < 5; ++i3) {
            const size_t o = i0 * 60 + i1 * 20 + i2 * 5 + i3;
            const float want = ref::eltwise(op, a[o], b[i1 * 5 + i3]);
            ASSERT_TRUE(same_bits(out[o], want) || (std::isnan(want) && std::isnan(out[o])))
                << int(op) << " at " << o;
          }
  }
}

TEST(Eltwise, Int8SaturatingAndInt32Strided) {
  Sram s;
  auto a = random_ints<int8_t>(64, -128, 127), b = random_ints<int8_t>(64, -128, 127);
  s.put(kA, a);
  s.put(kB, b);
  for (uint8_t op = NPU_ELTWISE_ADD; op <= NPU_ELTWISE_MIN; ++op) {
    npu_cmd cmd = zero_cmd(NPU_OP_ELTWISE, NPU_ENGINE_VECTOR);
    auto& c = cmd.eltwise;
    c.op = op, c.dtype = NPU_DTYPE_INT8;
    const uint32_t shape[4] = {1, 1, 8, 8};
    std::copy(shape, shape + 4, c.shape);
    c.a = view(kA, {0, 0, 8, 1});
    c.b = view(kB, {0, 0, 1, 8});  // transposed read
    c.out = view(kO, {0, 0, 8, 1});
    run_vector(cmd, s.span());
    const auto out = s.get<int8_t>(kO, 64);
    for (size_t i = 0; i < 8; ++i)
      for (size_t j = 0; j < 8; ++j)
        ASSERT_EQ(out[i * 8 + j], ref::eltwise_int(op, a[i * 8 + j], b[j * 8 + i], NPU_DTYPE_INT8));
  }
  auto a32 = random_ints<int32_t>(30, INT32_MIN, INT32_MAX);
  auto b32 = random_ints<int32_t>(30, -5, 5);
  s.put(kA, a32);
  s.put(kB, b32);
  for (uint8_t op : {NPU_ELTWISE_MUL, NPU_ELTWISE_DIV, NPU_ELTWISE_ADD}) {
    npu_cmd cmd = zero_cmd(NPU_OP_ELTWISE, NPU_ENGINE_VECTOR);
    auto& c = cmd.eltwise;
    c.op = op, c.dtype = NPU_DTYPE_INT32;
    const uint32_t shape[4] = {1, 1, 1, 15};
    std::copy(shape, shape + 4, c.shape);
    c.a = view(kA, {0, 0, 0, 2});
    c.b = view(kB, {0, 0, 0, 1});
    c.out = view(kO, {0, 0, 0, 1});
    run_vector(cmd, s.span());
    const auto out = s.get<int32_t>(kO, 15);
    for (size_t i = 0; i < 15; ++i)
      ASSERT_EQ(out[i], ref::eltwise_int(op, a32[2 * i], b32[i], NPU_DTYPE_INT32));
  }
}

// Strides of 0 let a view that fits in SRAM hold 2^64 elements. A device reset (the watchdog)
// must stop such a command within a piece of its run, as it stops a DMA box of billions of
// rows: each command below would run for centuries unpolled (the suite's timeout fails it).
TEST(Eltwise, AResetStopsBillionsOfBroadcastElements) {
  Sram s;
  const std::atomic<bool> reset{true};
  const uint32_t shape[4] = {65535, 65535, 65535, 65535};
  npu_cmd add = zero_cmd(NPU_OP_ELTWISE, NPU_ENGINE_VECTOR);
  add.eltwise.op = NPU_ELTWISE_ADD, add.eltwise.dtype = NPU_DTYPE_INT8;
  std::copy(shape, shape + 4, add.eltwise.shape);
  add.eltwise.a = view(kA, {0, 0, 0, 0});
  add.eltwise.b = view(kB, {0, 0, 0, 0});
  add.eltwise.out = view(kO, {0, 0, 0, 0});
  run_vector(add, s.span(), &reset);
  for (const uint8_t fn : {uint8_t{NPU_ACT_COPY}, uint8_t{NPU_ACT_SIGMOID}}) {
    npu_cmd act = zero_cmd(NPU_OP_ACTIVATION, NPU_ENGINE_VECTOR);
    act.activation.func = fn, act.activation.dtype = NPU_DTYPE_FP32;
    std::copy(shape, shape + 4, act.activation.shape);
    act.activation.in = view(kA, {0, 0, 0, 0});
    act.activation.out = view(kO, {0, 0, 0, 1});  // a run of 65535 outputs, written again
    run_vector(act, s.span(), &reset);
  }
}

TEST(Activation, Fp32EveryFunctionStrided) {
  for (uint8_t fn = NPU_ACT_COPY; fn <= NPU_ACT_MAX; ++fn) {
    Sram s;
    auto x = random_floats(2 * 7 * 2, -4, 4);
    s.put(kA, x);
    npu_cmd cmd = zero_cmd(NPU_OP_ACTIVATION, NPU_ENGINE_VECTOR);
    auto& c = cmd.activation;
    c.func = fn, c.dtype = NPU_DTYPE_FP32, c.alpha = 0.1f, c.beta = 0.6f;
    const uint32_t shape[4] = {1, 1, 2, 7};
    std::copy(shape, shape + 4, c.shape);
    c.in = view(kA, {0, 0, 14, 2});  // every other element
    c.out = view(kO, {0, 0, 7, 1});
    run_vector(cmd, s.span());
    const auto out = s.get<float>(kO, 14);
    for (size_t i = 0; i < 14; ++i) {
      const float want = ref::activation(fn, x[(i / 7) * 14 + (i % 7) * 2], 0.1f, 0.6f);
      ASSERT_TRUE(same_bits(out[i], want) || (std::isnan(want) && std::isnan(out[i])))
          << int(fn) << " at " << i;
    }
  }
}

// fp32 EXP and SIGMOID run 32 lanes at a time at the AVX-512 level (exp_f32.h, glibc's expf
// replayed; a block with a lane of |x| >= 88, an infinity or NaN, and the tail, 8 at a time
// with the scalar function for those lanes): the same bits as ref::activation on every float
// exponent, both signs, the special thresholds, contiguous and strided, in runs that are not a
// multiple of 32 long. (All 2^32 inputs were compared once with a separate program; see the
// commit that added exp_f32.)
TEST(Activation, ExpAndSigmoidAreTheScalarBits) {
  constexpr size_t kN = 70001;  // not a multiple of 16
  std::vector<float> x(kN);
  for (size_t i = 0; i < kN; ++i) x[i] = std::bit_cast<float>(static_cast<uint32_t>(i * 61357u));
  const float edges[] = {88.0f, 88.72283f, -88.0f, -103.27893f, -103.97208f, -87.33655f};
  for (size_t e = 0; e < std::size(edges); ++e)
    for (size_t d = 0; d < 64; ++d)
      x[e * 64 + d] =
          std::bit_cast<float>(static_cast<uint32_t>(std::bit_cast<uint32_t>(edges[e]) + d - 32));
  x[500] = INFINITY, x[501] = -INFINITY, x[502] = NAN, x[503] = -0.0f, x[504] = 0.0f;
  for (size_t i = 600; i < 2600; ++i) x[i] = static_cast<float>(i - 1600) * 0.01f;
  for (kern::Isa isa : kVectorIsas)
    for (uint8_t fn : {uint8_t{NPU_ACT_EXP}, uint8_t{NPU_ACT_SIGMOID}})
      for (uint32_t stride : {1u, 2u}) {
        IsaGuard guard;
        kern::set_kernel_isa(isa);
        Sram s;
        s.put(kA, x);
        npu_cmd cmd = zero_cmd(NPU_OP_ACTIVATION, NPU_ENGINE_VECTOR);
        auto& c = cmd.activation;
        c.func = fn, c.dtype = NPU_DTYPE_FP32;
        const uint32_t n = static_cast<uint32_t>(kN / stride);
        const uint32_t shape[4] = {1, 1, 1, n};
        std::copy(shape, shape + 4, c.shape);
        c.in = view(kA, {0, 0, 0, stride});
        c.out = view(kO + 0x80000, {0, 0, 0, 1});
        run_vector(cmd, s.span());
        const auto out = s.get<float>(kO + 0x80000, n);
        for (size_t i = 0; i < n; ++i) {
          const float want = ref::activation(fn, x[i * stride], 0.0f, 0.0f);
          ASSERT_TRUE(same_bits(out[i], want))
              << kern::isa_name(isa) << " fn " << int(fn) << " x " << x[i * stride] << ": want "
              << want << " got " << out[i];
        }
      }
}

// The vector loop is what runs on a CPU with AVX-512 (glibc computes expf with the FMAs it
// replays): were the check before its first use to refuse it, the bits above would come from
// the scalar rule and the loop would be slow without a word.
TEST(Activation, ExpLoopRunsWhereTheCpuHasAvx512) {
  IsaGuard guard;
  kern::set_kernel_isa(kern::Isa::Avx512);
  if (!kern::isa_at_least(kern::Isa::Avx512)) GTEST_SKIP() << "no AVX-512 on this host";
  EXPECT_TRUE(kern::exp_f32_vectorized());
}

TEST(Activation, IntegerFunctionsAndCopy) {
  Sram s;
  auto x8 = random_ints<int8_t>(50, -128, 127);
  s.put(kA, x8);
  for (uint8_t fn : {NPU_ACT_RELU, NPU_ACT_CLIP, NPU_ACT_ABS, NPU_ACT_NEG, NPU_ACT_COPY}) {
    for (uint8_t dt : {NPU_DTYPE_INT8, NPU_DTYPE_UINT8}) {
      if (dt == NPU_DTYPE_UINT8 && fn != NPU_ACT_COPY) continue;
      npu_cmd cmd = zero_cmd(NPU_OP_ACTIVATION, NPU_ENGINE_VECTOR);
      auto& c = cmd.activation;
      c.func = fn, c.dtype = dt, c.alpha = -20.5f, c.beta = 33.5f;
      const uint32_t shape[4] = {50, 1, 1, 1};
      std::copy(shape, shape + 4, c.shape);
      c.in = view(kA, {1, 0, 0, 0});
      c.out = view(kO, {1, 0, 0, 0});
      run_vector(cmd, s.span());
      const auto out = s.get<int8_t>(kO, 50);
      for (size_t i = 0; i < 50; ++i)
        ASSERT_EQ(out[i], static_cast<int8_t>(
                              ref::activation_int(fn, x8[i], -20.5f, 33.5f, NPU_DTYPE_INT8)))
            << int(fn);
    }
  }
  auto x32 = random_ints<int32_t>(20, INT32_MIN, INT32_MAX);
  x32[0] = INT32_MIN;
  s.put(kA, x32);
  npu_cmd cmd = zero_cmd(NPU_OP_ACTIVATION, NPU_ENGINE_VECTOR);
  auto& c = cmd.activation;
  c.func = NPU_ACT_NEG, c.dtype = NPU_DTYPE_INT32;
  const uint32_t shape[4] = {1, 1, 1, 20};
  std::copy(shape, shape + 4, c.shape);
  c.in = view(kA, {0, 0, 0, 1});
  c.out = view(kA, {0, 0, 0, 1});  // in place
  run_vector(cmd, s.span());
  const auto out = s.get<int32_t>(kA, 20);
  for (size_t i = 0; i < 20; ++i)
    ASSERT_EQ(out[i], ref::activation_int(NPU_ACT_NEG, x32[i], 0, 0, NPU_DTYPE_INT32));
}

/// Naive pool over HWC.
template <class T>
std::vector<double> pool_oracle(const npu_cmd_pool& c, const std::vector<T>& x) {
  std::vector<double> out(size_t{c.out_h} * c.out_w * c.channels);
  for (int oy = 0; oy < c.out_h; ++oy)
    for (int ox = 0; ox < c.out_w; ++ox)
      for (int ch = 0; ch < c.channels; ++ch) {
        double acc = c.kind == NPU_POOL_MAX ? -INFINITY : 0.0;
        int valid = 0, padded = 0;
        for (int ky = 0; ky < c.k_h; ++ky)
          for (int kx = 0; kx < c.k_w; ++kx) {
            const int iy = oy * c.stride_h - c.pad_top + ky, ix = ox * c.stride_w - c.pad_left + kx;
            if (iy < c.in_h + c.pad_bottom && ix < c.in_w + c.pad_right) ++padded;
            if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) continue;
            ++valid;
            const double v = x[(size_t(iy) * c.in_w + ix) * c.channels + ch];
            acc = c.kind == NPU_POOL_MAX ? std::max(acc, v) : acc + v;
          }
        if (c.kind == NPU_POOL_AVG) {
          const int cnt = (c.hdr.flags & NPU_POOL_FLAG_COUNT_PAD) ? padded : valid;
          if constexpr (std::is_same_v<T, float>)
            acc = static_cast<float>(acc) / static_cast<float>(cnt);
          else
            acc = static_cast<double>(ref::div_round_half_even(static_cast<int64_t>(acc), cnt));
        }
        out[(size_t(oy) * c.out_w + ox) * c.channels + ch] = acc;
      }
  return out;
}

template <class T>
void check_pool(uint8_t dtype, uint8_t kind, uint16_t flags) {
  Sram s;
  npu_cmd cmd = zero_cmd(NPU_OP_POOL, NPU_ENGINE_VECTOR);
  auto& c = cmd.pool;
  c.hdr.flags = flags;
  c.kind = kind, c.dtype = dtype;
  c.in_addr = kA, c.out_addr = kO;
  c.in_h = 9, c.in_w = 8, c.channels = 19;
  c.k_h = 3, c.k_w = 2, c.stride_h = 2, c.stride_w = 2;
  c.pad_top = 1, c.pad_left = 1, c.pad_bottom = 1, c.pad_right = 0;
  c.out_h = (9 + 2 - 3) / 2 + 1, c.out_w = (8 + 1 - 2) / 2 + 1;
  const size_t n = 9 * 8 * 19;
  std::vector<T> x;
  if constexpr (std::is_same_v<T, float>)
    x = random_floats(n);
  else
    x = random_ints<T>(n, ref::dtype_min(dtype), ref::dtype_max(dtype));
  s.put(kA, x);
  run_vector(cmd, s.span());
  const auto want = pool_oracle(c, x);
  const auto out = s.get<T>(kO, want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if constexpr (std::is_same_v<T, float>)
      ASSERT_NEAR(out[i], want[i], 1e-6) << i;
    else
      ASSERT_EQ(out[i], static_cast<T>(want[i])) << i;
  }
}

TEST(Pool, MaxAndAvgEveryDtype) {
  check_pool<float>(NPU_DTYPE_FP32, NPU_POOL_MAX, 0);
  check_pool<float>(NPU_DTYPE_FP32, NPU_POOL_AVG, 0);
  check_pool<float>(NPU_DTYPE_FP32, NPU_POOL_AVG, NPU_POOL_FLAG_COUNT_PAD);
  check_pool<int8_t>(NPU_DTYPE_INT8, NPU_POOL_MAX, 0);
  check_pool<int8_t>(NPU_DTYPE_INT8, NPU_POOL_AVG, 0);
  check_pool<uint8_t>(NPU_DTYPE_UINT8, NPU_POOL_AVG, NPU_POOL_FLAG_COUNT_PAD);
  check_pool<uint8_t>(NPU_DTYPE_UINT8, NPU_POOL_MAX, 0);
}

TEST(Pool, Int8AvgRoundsHalfToEven) {
  Sram s;
  npu_cmd cmd = zero_cmd(NPU_OP_POOL, NPU_ENGINE_VECTOR);
  auto& c = cmd.pool;
  c.kind = NPU_POOL_AVG, c.dtype = NPU_DTYPE_INT8, c.in_addr = kA, c.out_addr = kO;
  c.in_h = 1, c.in_w = 2, c.channels = 4, c.k_h = 1, c.k_w = 2, c.stride_h = c.stride_w = 1;
  c.out_h = 1, c.out_w = 1;
  s.put(kA, std::vector<int8_t>{1, 3, -1, -3, 2, 2, -2, -2});  // sums 3, 5, -3, -5
  run_vector(cmd, s.span());
  EXPECT_EQ(s.get<int8_t>(kO, 4), (std::vector<int8_t>{2, 2, -2, -2}));
}

TEST(Softmax, PlainAndLog) {
  for (uint16_t flags : {uint16_t{0}, uint16_t{NPU_SOFTMAX_FLAG_LOG}}) {
    Sram s;
    auto x = random_floats(3 * 37, -30, 30);
    x[5] = 88.0f;  // would overflow exp without the max subtraction
    s.put(kA, x);
    npu_cmd cmd = zero_cmd(NPU_OP_SOFTMAX, NPU_ENGINE_VECTOR);
    cmd.hdr.flags = flags;
    cmd.softmax.in_addr = kA, cmd.softmax.out_addr = kO, cmd.softmax.rows = 3, cmd.softmax.len = 37;
    run_vector(cmd, s.span());
    const auto out = s.get<float>(kO, x.size());
    for (size_t r = 0; r < 3; ++r) {
      double m = -INFINITY, sum = 0;
      for (size_t i = 0; i < 37; ++i) m = std::max<double>(m, x[r * 37 + i]);
      for (size_t i = 0; i < 37; ++i) sum += std::exp(double{x[r * 37 + i]} - m);
      for (size_t i = 0; i < 37; ++i) {
        const double lp = x[r * 37 + i] - m - std::log(sum);
        if (flags)
          ASSERT_NEAR(out[r * 37 + i], lp, 1e-4);
        else
          ASSERT_NEAR(out[r * 37 + i], std::exp(lp), 1e-6 + 1e-5 * std::exp(lp));
      }
    }
  }
}

TEST(ScaleShift, PerChannel) {
  Sram s;
  auto x = random_floats(4 * 6), sc = random_floats(6), sh = random_floats(6);
  s.put(kA, x), s.put(kB, sc), s.put(kP, sh);
  npu_cmd cmd = zero_cmd(NPU_OP_SCALE_SHIFT, NPU_ENGINE_VECTOR);
  auto& c = cmd.scale_shift;
  c.in_addr = kA, c.out_addr = kO, c.scale_addr = kB, c.shift_addr = kP, c.outer = 4,
  c.channels = 6;
  run_vector(cmd, s.span());
  const auto out = s.get<float>(kO, 24);
  for (size_t i = 0; i < 24; ++i) {
    const float p = x[i] * sc[i % 6];
    ASSERT_TRUE(same_bits(out[i], p + sh[i % 6])) << i;
  }
}

TEST(Quantize, PerTensorAndPerChannel) {
  IsaGuard guard;
  Sram s;
  constexpr size_t kCount = 66, kInner = 11;  // 6 runs of 11: vector bodies and tails
  auto x = random_floats(kCount, -3, 3);
  x[0] = NAN, x[1] = 1e9f, x[2] = -INFINITY, x[3] = INFINITY, x[4] = -1e9f;
  for (size_t i = 22; i < 33; ++i) x[i] = static_cast<float>(static_cast<int>(i) - 27) + 0.25f;
  s.put(kA, x);
  // Channel 2 has scale 0.5: its inputs k + 0.25 quantize to ties (2k + 0.5).
  std::vector<npu_qparam> q{{0.02f, 3}, {0.05f, -7}, {0.5f, 100}};
  s.put(kP, q);
  for (kern::Isa isa : kVectorIsas)
    for (uint8_t dt : {NPU_DTYPE_INT8, NPU_DTYPE_UINT8})
      for (uint32_t channels : {1u, 3u}) {
        kern::set_kernel_isa(isa);
        npu_cmd cmd = zero_cmd(NPU_OP_QUANTIZE, NPU_ENGINE_VECTOR);
        auto& c = cmd.quant;
        c.in_addr = kA, c.out_addr = kO, c.count = kCount, c.channels = channels;
        c.inner = kInner, c.params_addr = kP, c.scale = 0.03f;
        c.zp = dt == NPU_DTYPE_UINT8 ? 128 : -2;
        c.in_dtype = NPU_DTYPE_FP32, c.out_dtype = dt;
        s.put(kO, std::vector<uint8_t>(kCount + 1, 0xA5));
        run_vector(cmd, s.span());
        const auto out = s.get<uint8_t>(kO, kCount + 1);
        for (size_t i = 0; i < kCount; ++i) {
          const float scale = channels == 1 ? c.scale : q[(i / kInner) % 3].scale;
          const int32_t zp = channels == 1 ? c.zp : q[(i / kInner) % 3].zp;
          const int32_t want =
              ref::quantize(x[i], scale, zp, ref::dtype_min(dt), ref::dtype_max(dt));
          const int32_t got = dt == NPU_DTYPE_INT8 ? static_cast<int8_t>(out[i]) : out[i];
          ASSERT_EQ(got, want) << kern::isa_name(isa) << " " << i;
        }
        EXPECT_EQ(out[kCount], 0xA5) << "written past the output";
      }
}

TEST(Dequantize, Int8Uint8Int32) {
  IsaGuard guard;
  Sram s;
  constexpr size_t kCount = 45, kInner = 9;
  std::vector<npu_qparam> q{{0.02f, 3}, {0.05f, -7}};
  s.put(kP, q);
  for (kern::Isa isa : kVectorIsas)
    for (uint8_t dt : {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT32}) {
      kern::set_kernel_isa(isa);
      auto x = random_ints<int32_t>(kCount, ref::dtype_min(dt) / 2, ref::dtype_max(dt) / 2);
      if (dt != NPU_DTYPE_INT32) x[0] = ref::dtype_min(dt), x[1] = ref::dtype_max(dt);
      std::vector<std::byte> raw(kCount * 4);
      for (size_t i = 0; i < kCount; ++i) {
        if (dt == NPU_DTYPE_INT32)
          std::memcpy(raw.data() + i * 4, &x[i], 4);
        else
          raw[i] = static_cast<std::byte>(x[i]);
      }
      s.put(kA, raw);
      npu_cmd cmd = zero_cmd(NPU_OP_DEQUANTIZE, NPU_ENGINE_VECTOR);
      auto& c = cmd.quant;
      c.in_addr = kA, c.out_addr = kO, c.count = kCount, c.channels = 2, c.inner = kInner;
      c.params_addr = kP, c.in_dtype = dt, c.out_dtype = NPU_DTYPE_FP32;
      s.put(kO, std::vector<float>(kCount + 1, 7.0f));
      run_vector(cmd, s.span());
      const auto out = s.get<float>(kO, kCount + 1);
      for (size_t i = 0; i < kCount; ++i) {
        const auto& p = q[(i / kInner) % 2];
        ASSERT_TRUE(same_bits(out[i], ref::dequantize(x[i], p.scale, p.zp)))
            << kern::isa_name(isa) << " " << i;
      }
      EXPECT_EQ(out[kCount], 7.0f) << "written past the output";
    }
}

TEST(Requantize, Int32ToInt8AndUint8ToUint8) {
  Sram s;
  auto x = random_ints<int32_t>(40, -100000, 100000);
  s.put(kA, x);
  npu_cmd cmd = zero_cmd(NPU_OP_REQUANTIZE, NPU_ENGINE_VECTOR);
  auto& c = cmd.requant;
  const auto qm = ref::quantize_multiplier(0.00123);
  c.in_addr = kA, c.out_addr = kO, c.count = 40, c.multiplier = qm.multiplier, c.shift = qm.shift;
  c.in_zp = 17, c.out_zp = -5, c.clamp_min = -100, c.clamp_max = 127;
  c.in_dtype = NPU_DTYPE_INT32, c.out_dtype = NPU_DTYPE_INT8;
  run_vector(cmd, s.span());
  auto out = s.get<int8_t>(kO, 40);
  for (size_t i = 0; i < 40; ++i)
    ASSERT_EQ(out[i], ref::requantize(int64_t{x[i]} - 17, qm.multiplier, qm.shift, -5, -100, 127));

  auto u = random_ints<uint8_t>(40, 0, 255);
  s.put(kA, u);
  const auto q2 = ref::quantize_multiplier(0.75);
  c.multiplier = q2.multiplier, c.shift = q2.shift, c.in_zp = 128, c.out_zp = 120;
  c.clamp_min = 0, c.clamp_max = 255, c.in_dtype = c.out_dtype = NPU_DTYPE_UINT8;
  run_vector(cmd, s.span());
  const auto out2 = s.get<uint8_t>(kO, 40);
  for (size_t i = 0; i < 40; ++i)
    ASSERT_EQ(out2[i], ref::requantize(int64_t{u[i]} - 128, q2.multiplier, q2.shift, 120, 0, 255));
}

TEST(Transpose, EveryElementSize) {
  const uint32_t shape[4] = {2, 3, 4, 5};
  const uint8_t perms[][4] = {{0, 2, 3, 1}, {3, 2, 1, 0}, {1, 0, 2, 3}, {0, 1, 2, 3}};
  for (uint32_t es : {1u, 2u, 4u})
    for (const auto& perm : perms) {
      Sram s;
      auto x = random_ints<uint8_t>(120 * es, 0, 255);
      s.put(kA, x);
      npu_cmd cmd = zero_cmd(NPU_OP_TRANSPOSE, NPU_ENGINE_VECTOR);
      auto& c = cmd.transpose;
      c.in_addr = kA, c.out_addr = kO, c.elem_size = es;
      std::copy(shape, shape + 4, c.in_shape);
      std::copy(perm, perm + 4, c.perm);
      run_vector(cmd, s.span());
      const auto out = s.get<uint8_t>(kO, 120 * es);
      const uint32_t st[4] = {60, 20, 5, 1};
      size_t o = 0;
      uint32_t i[4];
      for (i[0] = 0; i[0] < shape[perm[0]]; ++i[0])
        for (i[1] = 0; i[1] < shape[perm[1]]; ++i[1])
          for (i[2] = 0; i[2] < shape[perm[2]]; ++i[2])
            for (i[3] = 0; i[3] < shape[perm[3]]; ++i[3], ++o) {
              size_t src = 0;
              for (int d = 0; d < 4; ++d) src += i[d] * st[perm[d]];
              for (uint32_t b = 0; b < es; ++b) ASSERT_EQ(out[o * es + b], x[src * es + b]);
            }
    }
}

TEST(Reduce, EveryKind) {
  Sram s;
  const uint32_t outer = 3, len = 7, inner = 11;
  auto x = random_floats(outer * len * inner, -5, 5);
  s.put(kA, x);
  for (uint8_t kind = NPU_REDUCE_SUM; kind <= NPU_REDUCE_MIN; ++kind) {
    npu_cmd cmd = zero_cmd(NPU_OP_REDUCE, NPU_ENGINE_VECTOR);
    auto& c = cmd.reduce;
    c.kind = kind, c.in_addr = kA, c.out_addr = kO, c.outer = outer, c.len = len, c.inner = inner;
    run_vector(cmd, s.span());
    const auto out = s.get<float>(kO, outer * inner);
    for (uint32_t o = 0; o < outer; ++o)
      for (uint32_t i = 0; i < inner; ++i) {
        double acc = kind == NPU_REDUCE_MAX ? -INFINITY : kind == NPU_REDUCE_MIN ? INFINITY : 0.0;
        for (uint32_t l = 0; l < len; ++l) {
          const double v = x[(o * len + l) * inner + i];
          acc = kind == NPU_REDUCE_MAX   ? std::max(acc, v)
                : kind == NPU_REDUCE_MIN ? std::min(acc, v)
                                         : acc + v;
        }
        if (kind == NPU_REDUCE_MEAN) acc /= len;
        ASSERT_NEAR(out[o * inner + i], acc, 1e-5) << int(kind);
      }
  }
}

TEST(Moments, BitExactAgainstMulThenReduceMean) {
  // MOMENTS must equal ELTWISE MUL (x, x) + REDUCE MEAN and REDUCE MEAN of x bit for bit: the
  // lowering may swap one for the other.
  Sram s;
  const uint32_t outer = 3, len = 37, inner = 5;
  auto x = random_floats(outer * len * inner, -50, 50);
  s.put(kA, x);
  npu_cmd cmd = zero_cmd(NPU_OP_MOMENTS, NPU_ENGINE_VECTOR);
  auto& c = cmd.moments;
  c.in_addr = kA, c.mean_addr = kO, c.sq_addr = kP, c.outer = outer, c.len = len, c.inner = inner;
  run_vector(cmd, s.span());
  const auto mean = s.get<float>(kO, outer * inner), sq = s.get<float>(kP, outer * inner);

  npu_cmd red = zero_cmd(NPU_OP_REDUCE, NPU_ENGINE_VECTOR);
  red.reduce.kind = NPU_REDUCE_MEAN, red.reduce.in_addr = kA, red.reduce.out_addr = kO;
  red.reduce.outer = outer, red.reduce.len = len, red.reduce.inner = inner;
  run_vector(red, s.span());
  const auto want_mean = s.get<float>(kO, outer * inner);
  std::vector<float> squares(x.size());
  for (size_t i = 0; i < x.size(); ++i) squares[i] = x[i] * x[i];
  s.put(kB, squares);
  red.reduce.in_addr = kB;
  run_vector(red, s.span());
  const auto want_sq = s.get<float>(kO, outer * inner);
  for (size_t i = 0; i < mean.size(); ++i) {
    ASSERT_EQ(std::bit_cast<uint32_t>(mean[i]), std::bit_cast<uint32_t>(want_mean[i])) << i;
    ASSERT_EQ(std::bit_cast<uint32_t>(sq[i]), std::bit_cast<uint32_t>(want_sq[i])) << i;
    ASSERT_GT(sq[i], 0.0f);
  }
}

}  // namespace
}  // namespace npu::emu::test

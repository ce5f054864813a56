// CONV2D and MATMUL of npu_emu_kernels against naive direct loops (int: bit-exact; fp32:
// within 1e-5 of the sum of |terms|), on every ISA level of the tile kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gemm.h"
#include "npu/emu/kernels.h"
#include "npu/isa/dtype.h"
#include "npu/isa/half.h"
#include "npu/ref/scalar.h"
#include "parallel.h"
#include "sram_versions.h"
#include "test_util.h"

namespace npu::emu::test {
namespace {

constexpr kern::Isa kIsas[] = {kern::Isa::Portable, kern::Isa::Avx2, kern::Isa::AvxVnni,
                               kern::Isa::Avx512, kern::Isa::Amx};

int32_t dmin(uint8_t t) {
  return ref::dtype_min(t);
}
int32_t dmax(uint8_t t) {
  return ref::dtype_max(t);
}

template <class T>
std::vector<T> ints_of(uint8_t dtype, size_t n) {
  return random_ints<T>(n, dmin(dtype), dmax(dtype));
}

std::vector<std::byte> random_tensor(uint8_t dtype, size_t n) {
  std::vector<std::byte> b(n * isa::dtype_size(dtype));
  if (isa::dtype_is_half(dtype)) {  // ISA 1.1: random values rounded to the half type
    const auto f = random_floats(n);
    for (size_t i = 0; i < n; ++i) {
      const uint16_t h = isa::fp32_to_half(dtype, f[i]);
      std::memcpy(b.data() + 2 * i, &h, 2);
    }
  } else if (dtype == NPU_DTYPE_FP32) {
    auto f = random_floats(n);
    std::memcpy(b.data(), f.data(), b.size());
  } else {
    auto v = random_ints<uint8_t>(n, 0, 255);
    std::memcpy(b.data(), v.data(), n);
  }
  return b;
}

int64_t ld_int(const std::vector<std::byte>& v, size_t i, uint8_t dtype) {
  if (dtype == NPU_DTYPE_INT8) return static_cast<int8_t>(v[i]);
  if (dtype == NPU_DTYPE_UINT8) return static_cast<uint8_t>(v[i]);
  int32_t x;
  std::memcpy(&x, v.data() + i * 4, 4);
  return x;
}
float ld_f(const std::vector<std::byte>& v, size_t i, uint8_t dtype = NPU_DTYPE_FP32) {
  if (isa::dtype_is_half(dtype)) {
    uint16_t h;
    std::memcpy(&h, v.data() + i * 2, 2);
    return isa::half_to_fp32(dtype, h);
  }
  float x;
  std::memcpy(&x, v.data() + i * 4, 4);
  return x;
}

std::vector<npu_chan_qparams> random_qparams(size_t n, uint8_t w_dtype, size_t k, bool wide_zp) {
  std::vector<npu_chan_qparams> q(n);
  for (auto& p : q) {
    const double scale = std::uniform_real_distribution<double>(0.2, 2.0)(rng()) / (64.0 * k);
    const auto qm = ref::quantize_multiplier(scale);
    p.multiplier = qm.multiplier;
    p.shift = qm.shift;
    p.bias = random_ints<int32_t>(1, -2000, 2000)[0];
    const int mid = w_dtype == NPU_DTYPE_UINT8 ? 128 : 0;
    p.w_zp = wide_zp ? random_ints<int32_t>(1, -1000, 1000)[0]
                     : random_ints<int32_t>(1, mid - 12, mid + 12)[0];
  }
  return q;
}

// ----------------------------------------------------------------------------------- conv

struct ConvCase {
  int ih, iw, ic, oc, kh, kw, groups, sh, sw, dh, dw, pt, pl, pb, pr;
};

std::string name(const ConvCase& c) {
  return std::to_string(c.ih) + "x" + std::to_string(c.iw) + "x" + std::to_string(c.ic) + "->" +
         std::to_string(c.oc) + " k" + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " g" +
         std::to_string(c.groups) + " s" + std::to_string(c.sh) + "," + std::to_string(c.sw) +
         " d" + std::to_string(c.dh) + "," + std::to_string(c.dw);
}

const ConvCase kConvCases[] = {
    {9, 11, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     // 3x3 same
    {13, 10, 5, 7, 3, 2, 1, 2, 1, 2, 1, 2, 0, 1, 1},     // stride, dilation, asym pads
    {7, 7, 33, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},     // pointwise
    {9, 8, 6, 10, 1, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0},      // 1x1 stride 2
    {8, 8, 16, 12, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1},     // grouped
    {10, 10, 24, 24, 3, 3, 24, 2, 2, 1, 1, 1, 1, 1, 1},  // depthwise
    {6, 7, 4, 8, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1},       // depthwise, multiplier 2
    {5, 6, 3, 3, 5, 5, 3, 1, 1, 1, 1, 4, 4, 4, 4},       // depthwise, pads > input
    {12, 13, 40, 40, 3, 3, 40, 1, 1, 1, 1, 1, 1, 1, 1},  // depthwise, a tail of 8 channels
    {11, 9, 20, 20, 5, 5, 20, 2, 1, 1, 2, 2, 3, 1, 2},   // depthwise 5x5, stride, dilation
    {13, 12, 24, 24, 3, 3, 24, 1, 1, 3, 2, 3, 2, 3, 2},  // depthwise, row dilation = kh
    {9, 9, 16, 16, 2, 2, 16, 1, 1, 2, 2, 1, 1, 1, 1},    // depthwise 2x2, row dilation 2
    {14, 14, 64, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // several blocks and panels
    {4, 4, 3, 5, 4, 4, 1, 1, 1, 1, 1, 0, 0, 0, 0},       // 1x1 output
    // Integer taps read in place: 96 channels (AMX: one 64-byte step and a tail of 32), rows
    // of 40 (equally spaced and gathered A tiles), wide and narrow panels; 20 channels at
    // stride 2; a pointwise convolution's rows.
    {6, 40, 96, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {9, 9, 20, 16, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},
    {7, 7, 32, 40, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
};

struct ConvSetup {
  npu_cmd cmd;
  int oh, ow, k;
  std::vector<std::byte> in, w;
  std::vector<npu_chan_qparams> q;
  std::vector<float> bias;
};

constexpr uint32_t kIn = 0x1001, kW = 0x100003, kChan = 0x200005, kOut = 0x300007;
constexpr uint32_t kInAligned = 0x80000;  // below kW for inputs up to 508 KiB

ConvSetup make_conv(const ConvCase& cc, uint8_t in_t, uint8_t w_t, uint8_t out_t, Sram& s) {
  ConvSetup st;
  st.cmd = zero_cmd(NPU_OP_CONV2D, NPU_ENGINE_MATRIX);
  auto& c = st.cmd.conv2d;
  st.oh = (cc.ih + cc.pt + cc.pb - cc.dh * (cc.kh - 1) - 1) / cc.sh + 1;
  st.ow = (cc.iw + cc.pl + cc.pr - cc.dw * (cc.kw - 1) - 1) / cc.sw + 1;
  st.k = cc.kh * cc.kw * (cc.ic / cc.groups);
  c.in_addr = kIn, c.w_addr = kW, c.chan_addr = kChan, c.out_addr = kOut;
  c.in_h = cc.ih, c.in_w = cc.iw, c.in_c = cc.ic;
  c.out_h = st.oh, c.out_w = st.ow, c.out_c = cc.oc;
  c.k_h = cc.kh, c.k_w = cc.kw, c.groups = cc.groups;
  c.stride_h = cc.sh, c.stride_w = cc.sw, c.dil_h = cc.dh, c.dil_w = cc.dw;
  c.pad_top = cc.pt, c.pad_left = cc.pl, c.pad_bottom = cc.pb, c.pad_right = cc.pr;
  c.in_dtype = in_t, c.w_dtype = w_t, c.out_dtype = out_t;
  c.fclamp_min = -INFINITY, c.fclamp_max = INFINITY;
  st.in = random_tensor(in_t, static_cast<size_t>(cc.ih * cc.iw * cc.ic));
  st.w = random_tensor(w_t, static_cast<size_t>(cc.oc * st.k));
  s.put(kIn, st.in);
  s.put(kW, st.w);
  return st;
}

/// Naive conv: int64 accumulation (or double for fp32, also returning sum |terms|).
void conv_oracle(const ConvSetup& st, std::vector<int64_t>& acc, std::vector<double>& facc,
                 std::vector<double>& fabs_sum) {
  const auto& c = st.cmd.conv2d;
  const int cin_g = c.in_c / c.groups, cout_g = c.out_c / c.groups;
  const bool fp = isa::dtype_is_float(c.in_dtype);
  const size_t n = static_cast<size_t>(st.oh * st.ow * c.out_c);
  acc.assign(n, 0);
  facc.assign(n, 0.0);
  fabs_sum.assign(n, 0.0);
  for (int oy = 0; oy < st.oh; ++oy)
    for (int ox = 0; ox < st.ow; ++ox)
      for (int o = 0; o < c.out_c; ++o) {
        const int g = o / cout_g;
        const size_t oi = static_cast<size_t>((oy * st.ow + ox) * c.out_c + o);
        for (int ky = 0; ky < c.k_h; ++ky)
          for (int kx = 0; kx < c.k_w; ++kx)
            for (int ci = 0; ci < cin_g; ++ci) {
              const int iy = oy * c.stride_h - c.pad_top + ky * c.dil_h;
              const int ix = ox * c.stride_w - c.pad_left + kx * c.dil_w;
              if (iy < 0 || iy >= c.in_h || ix < 0 || ix >= c.in_w) continue;
              const size_t xi = static_cast<size_t>((iy * c.in_w + ix) * c.in_c + g * cin_g + ci);
              const size_t wi = static_cast<size_t>(((o * c.k_h + ky) * c.k_w + kx) * cin_g + ci);
              if (fp) {
                const double t = double{ld_f(st.in, xi, c.in_dtype)} * ld_f(st.w, wi, c.w_dtype);
                facc[oi] += t;
                fabs_sum[oi] += std::fabs(t);
              } else {
                acc[oi] += (ld_int(st.in, xi, c.in_dtype) - c.in_zp) *
                           (ld_int(st.w, wi, c.w_dtype) - st.q[static_cast<size_t>(o)].w_zp);
              }
            }
      }
}

void check_conv_int(const ConvCase& cc, uint8_t in_t, uint8_t w_t, uint8_t out_t, bool relu,
                    bool wide_zp = false) {
  IsaGuard guard;
  Sram s;
  ConvSetup st = make_conv(cc, in_t, w_t, out_t, s);
  auto& c = st.cmd.conv2d;
  c.in_zp = wide_zp ? 300 : random_ints<int32_t>(1, dmin(in_t), dmax(in_t))[0];
  c.out_zp = out_t == NPU_DTYPE_INT32 ? 0 : random_ints<int32_t>(1, dmin(out_t), dmax(out_t))[0];
  c.clamp_min = relu ? c.out_zp : dmin(out_t);
  c.clamp_max = out_t == NPU_DTYPE_INT32 ? dmax(out_t) : dmax(out_t) - 3;
  st.q = random_qparams(static_cast<size_t>(cc.oc), w_t, static_cast<size_t>(st.k), wide_zp);
  s.put(kChan, st.q);

  std::vector<int64_t> acc;
  std::vector<double> fa, fs;
  conv_oracle(st, acc, fa, fs);
  for (kern::Isa isa : kIsas) {
    kern::set_kernel_isa(isa);
    s.put(kOut, std::vector<uint8_t>(acc.size() * 4 + 16, 0xA5));
    run_matrix(st.cmd, s.span());
    const auto out32 = s.get<int32_t>(kOut, acc.size());
    const auto out8 = s.get<uint8_t>(kOut, acc.size());
    size_t bad = 0;
    for (size_t i = 0; i < acc.size(); ++i) {
      const auto& p = st.q[i % static_cast<size_t>(cc.oc)];
      const int64_t a = acc[i] + p.bias;
      int32_t want, got;
      if (out_t == NPU_DTYPE_INT32) {
        want = static_cast<int32_t>(a);
        got = out32[i];
      } else {
        want = ref::requantize(a, p.multiplier, p.shift, c.out_zp, c.clamp_min, c.clamp_max);
        got = out_t == NPU_DTYPE_INT8 ? static_cast<int8_t>(out8[i]) : out8[i];
      }
      if (want != got && bad++ < 5)
        ADD_FAILURE() << name(cc) << " " << isa::dtype_name(in_t) << "x" << isa::dtype_name(w_t)
                      << "->" << isa::dtype_name(out_t) << " isa " << kern::isa_name(isa) << " at "
                      << i << ": want " << want << " got " << got;
    }
    EXPECT_EQ(bad, 0u) << name(cc);
    // Nothing written past the output.
    EXPECT_EQ(
        s.get<uint8_t>(
            kOut + static_cast<uint32_t>(acc.size() * (out_t == NPU_DTYPE_INT32 ? 4 : 1)), 1)[0],
        0xA5);
  }
}

TEST(Conv2d, Int8AllShapes) {
  for (const auto& cc : kConvCases)
    check_conv_int(cc, NPU_DTYPE_INT8, NPU_DTYPE_INT8, NPU_DTYPE_INT8, false);
}

TEST(Conv2d, Uint8AllShapesRelu) {
  for (const auto& cc : kConvCases)
    check_conv_int(cc, NPU_DTYPE_UINT8, NPU_DTYPE_UINT8, NPU_DTYPE_UINT8, true);
}

TEST(Conv2d, MixedSignednessAndInt32Out) {
  for (const auto& cc : kConvCases) {
    check_conv_int(cc, NPU_DTYPE_UINT8, NPU_DTYPE_INT8, NPU_DTYPE_INT8, true);
    check_conv_int(cc, NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_UINT8, false);
    check_conv_int(cc, NPU_DTYPE_INT8, NPU_DTYPE_INT8, NPU_DTYPE_INT32, false);
  }
}

TEST(Conv2d, ZeroPointsOutsideDtypeUseExactFallback) {
  for (const auto& cc : kConvCases)
    check_conv_int(cc, NPU_DTYPE_INT8, NPU_DTYPE_INT8, NPU_DTYPE_INT32, false, true);
}

void check_conv_f32(const ConvCase& cc, bool bias, float lo, float hi) {
  IsaGuard guard;
  Sram s;
  ConvSetup st = make_conv(cc, NPU_DTYPE_FP32, NPU_DTYPE_FP32, NPU_DTYPE_FP32, s);
  auto& c = st.cmd.conv2d;
  c.fclamp_min = lo, c.fclamp_max = hi;
  if (bias) {
    c.hdr.flags = NPU_MM_FLAG_BIAS;
    st.bias = random_floats(static_cast<size_t>(cc.oc));
    s.put(kChan, st.bias);
  }
  std::vector<int64_t> acc;
  std::vector<double> fa, fs;
  conv_oracle(st, acc, fa, fs);
  for (kern::Isa isa : kIsas) {
    kern::set_kernel_isa(isa);
    const auto out = [&] {
      s.put(kOut, std::vector<float>(fa.size(), NAN));
      run_matrix(st.cmd, s.span());
      return s.get<float>(kOut, fa.size());
    }();
    size_t bad = 0;
    for (size_t i = 0; i < fa.size(); ++i) {
      double want = fa[i] + (bias ? st.bias[i % static_cast<size_t>(cc.oc)] : 0.0);
      want = std::min<double>(std::max<double>(want, lo), hi);
      const double tol = 1e-5 * (fs[i] + 1.0);
      if (!(std::fabs(out[i] - want) <= tol) && bad++ < 5)
        ADD_FAILURE() << name(cc) << " isa " << static_cast<int>(isa) << " at " << i << ": want "
                      << want << " got " << out[i];
    }
    EXPECT_EQ(bad, 0u) << name(cc);
  }
}

/// ISA 1.1 half modes: inputs and weights of `dt`, output `out_dt` (dt or fp32). An fp32
/// output is within the fp32 tolerance of the exact sum; a half output is that, rounded.
void check_conv_half(const ConvCase& cc, uint8_t dt, uint8_t out_dt, bool bias, float lo,
                     float hi) {
  IsaGuard guard;
  Sram s;
  ConvSetup st = make_conv(cc, dt, dt, out_dt, s);
  auto& c = st.cmd.conv2d;
  c.fclamp_min = lo, c.fclamp_max = hi;
  if (bias) {
    c.hdr.flags = NPU_MM_FLAG_BIAS;
    st.bias = random_floats(static_cast<size_t>(cc.oc));
    s.put(kChan, st.bias);
  }
  std::vector<int64_t> acc;
  std::vector<double> fa, fs;
  conv_oracle(st, acc, fa, fs);
  const size_t oes = isa::dtype_size(out_dt);
  // Half of a unit in the last place, relative: 2^-11 (fp16), 2^-8 (bf16).
  const double half_ulp = out_dt == NPU_DTYPE_FP16   ? 0x1p-11
                          : out_dt == NPU_DTYPE_BF16 ? 0x1p-8
                                                     : 0;
  for (kern::Isa isa : kIsas) {
    kern::set_kernel_isa(isa);
    s.put(kOut, std::vector<uint8_t>(fa.size() * oes + 16, 0xA5));
    run_matrix(st.cmd, s.span());
    const auto raw = s.get<std::byte>(kOut, fa.size() * oes);
    const std::vector<std::byte> out(raw.begin(), raw.end());
    size_t bad = 0;
    for (size_t i = 0; i < fa.size(); ++i) {
      double want = fa[i] + (bias ? st.bias[i % static_cast<size_t>(cc.oc)] : 0.0);
      want = std::min<double>(std::max<double>(want, lo), hi);
      const double got = ld_f(out, i, out_dt);
      const double tol = 1e-5 * (fs[i] + 1.0) + half_ulp * std::fabs(want) + 0x1p-24;
      if (!(std::fabs(got - want) <= tol) && bad++ < 5)
        ADD_FAILURE() << name(cc) << " " << isa::dtype_name(dt) << "->" << isa::dtype_name(out_dt)
                      << " isa " << static_cast<int>(isa) << " at " << i << ": want " << want
                      << " got " << got;
    }
    EXPECT_EQ(bad, 0u) << name(cc);
    EXPECT_EQ(s.get<uint8_t>(kOut + static_cast<uint32_t>(fa.size() * oes), 1)[0], 0xA5);
  }
}

TEST(Conv2d, HalfAllShapes) {
  for (const auto& cc : kConvCases) {
    check_conv_half(cc, NPU_DTYPE_FP16, NPU_DTYPE_FP16, false, -INFINITY, INFINITY);
    check_conv_half(cc, NPU_DTYPE_FP16, NPU_DTYPE_FP32, true, 0.0f, 0.5f);
    check_conv_half(cc, NPU_DTYPE_BF16, NPU_DTYPE_BF16, true, -0.25f, INFINITY);
    check_conv_half(cc, NPU_DTYPE_BF16, NPU_DTYPE_FP32, false, -INFINITY, INFINITY);
  }
}

TEST(Conv2d, Fp32AllShapes) {
  for (const auto& cc : kConvCases) {
    check_conv_f32(cc, false, -INFINITY, INFINITY);
    check_conv_f32(cc, true, 0.0f, 0.5f);
  }
}

// Every fp32 convolution is one chain of multiply-adds per output over (ky, kx, ci), padding
// taps included as zeros: im2col rows and taps read in place (16 or more channels per group),
// alone or split, give the same bits. The oracle is that chain, fused (fmaf: AVX2 and AVX-512
// tiles of an optimized build) or a product and a sum (the portable tiles, baseline x86-64 has
// no FMA; every tile of an unoptimized build, where GCC does not contract).
TEST(Conv2d, Fp32IsTheFmaChainOverTheTaps) {
  const ConvCase cases[] = {
      {6, 56, 64, 16, 3, 3, 1, 1, 1, 1, 1, 0, 1, 0, 1},  // a ResNet tile: 16-channel slice
      {9, 11, 16, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // wide and narrow panels
      {13, 10, 20, 7, 3, 2, 1, 2, 1, 2, 1, 2, 0, 1, 1},  // stride, dilation, asymmetric pads
      {8, 8, 32, 24, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1},   // two groups of 16 channels
      {7, 9, 48, 33, 5, 5, 1, 2, 2, 1, 1, 2, 2, 2, 2},   // 5x5, K chunks of several taps
      {9, 9, 8, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    // 8 channels: im2col
      {5, 6, 24, 16, 5, 5, 1, 1, 1, 1, 1, 4, 4, 4, 4},   // pads larger than the input
  };
  const uint64_t saved_threshold = kern::split_threshold();
  for (const ConvCase& cc : cases) {
    IsaGuard guard;
    Sram s;
    ConvSetup st = make_conv(cc, NPU_DTYPE_FP32, NPU_DTYPE_FP32, NPU_DTYPE_FP32, s);
    s.put(kInAligned, st.in);
    const auto* x = reinterpret_cast<const float*>(st.in.data());
    const auto* w = reinterpret_cast<const float*>(st.w.data());
    const int cg = cc.ic / cc.groups, og = cc.oc / cc.groups;
    const auto oracle = [&](bool fused) {
      std::vector<float> want(static_cast<size_t>(st.oh * st.ow * cc.oc));
      for (int oy = 0; oy < st.oh; ++oy)
        for (int ox = 0; ox < st.ow; ++ox)
          for (int o = 0; o < cc.oc; ++o) {
            float acc = 0.0f;
            for (int ky = 0; ky < cc.kh; ++ky)
              for (int kx = 0; kx < cc.kw; ++kx)
                for (int ci = 0; ci < cg; ++ci) {
                  const int iy = oy * cc.sh - cc.pt + ky * cc.dh;
                  const int ix = ox * cc.sw - cc.pl + kx * cc.dw;
                  const bool in = iy >= 0 && iy < cc.ih && ix >= 0 && ix < cc.iw;
                  const float xv = in ? x[(iy * cc.iw + ix) * cc.ic + o / og * cg + ci] : 0.0f;
                  const float wv = w[((o * cc.kh + ky) * cc.kw + kx) * cg + ci];
                  if (fused) {
                    acc = std::fmaf(xv, wv, acc);
                  } else {
                    volatile float product = xv * wv;  // rounded on its own
                    acc = acc + product;
                  }
                }
            want[static_cast<size_t>((oy * st.ow + ox) * cc.oc + o)] = acc;
          }
      return want;
    };
    const std::vector<float> fused = oracle(true), unfused = oracle(false);
    for (kern::Isa isa : kIsas) {
      kern::set_kernel_isa(isa);
      // Which chain the tiles compute is the compiler's: fused where it contracts (optimized
      // builds on FMA hardware), a product and a sum elsewhere (the portable tiles; any tile
      // of an unoptimized build). The first run picks the oracle; every run must match it.
      const std::vector<float>* want_ptr = nullptr;
      // An unaligned input goes through im2col; an aligned one is read in place.
      for (const uint32_t in_addr : {kIn, kInAligned})
        for (const uint64_t threshold : {UINT64_MAX, uint64_t{0}}) {  // alone, and split
          kern::set_split_threshold(threshold);
          st.cmd.conv2d.in_addr = in_addr;
          s.put(kOut, std::vector<float>(fused.size() + 4, NAN));
          run_matrix(st.cmd, s.span());
          const auto got = s.get<float>(kOut, fused.size() + 1);
          if (want_ptr == nullptr) {
            const bool is_unfused =
                std::memcmp(got.data(), unfused.data(), unfused.size() * sizeof(float)) == 0;
            want_ptr = is_unfused ? &unfused : &fused;
          }
          const std::vector<float>& want = *want_ptr;
          size_t bad = 0;
          for (size_t i = 0; i < want.size(); ++i)
            if (std::memcmp(&got[i], &want[i], 4) != 0 && bad++ < 5)
              ADD_FAILURE() << name(cc) << " isa " << static_cast<int>(isa) << " in 0x" << std::hex
                            << in_addr << std::dec << " split " << (threshold == 0) << " at " << i
                            << ": want " << want[i] << " got " << got[i];
          EXPECT_EQ(bad, 0u) << name(cc);
          EXPECT_TRUE(std::isnan(got[want.size()])) << name(cc) << ": written past the output";
        }
    }
  }
  kern::set_split_threshold(saved_threshold);
}

// The packed panels of a convolution's fp32 weights are kept per thread while the SRAM they
// came from is unchanged (kern::SramVersions, which the device updates after every command's
// SRAM writes): new weights noted as written are packed again; bytes changed without a note
// (never done by the device) show that the second run really reused the first one's panels.
TEST(Conv2d, PackedWeightsAreReusedUntilTheirSramIsWritten) {
  Sram s;
  const ConvCase cc{6, 12, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  ConvSetup st = make_conv(cc, NPU_DTYPE_FP32, NPU_DTYPE_FP32, NPU_DTYPE_FP32, s);
  st.cmd.conv2d.in_addr = kInAligned;
  s.put(kInAligned, st.in);
  const size_t outs = static_cast<size_t>(st.oh * st.ow * cc.oc);
  const size_t w_bytes = st.w.size();
  kern::SramVersions versions(s.span().size());
  const kern::SramVersionsScope scope(&versions);
  const auto run = [&] {
    s.put(kOut, std::vector<float>(outs, NAN));
    run_matrix(st.cmd, s.span());
    return s.get<float>(kOut, outs);
  };
  const std::vector<float> first = run();
  EXPECT_EQ(run(), first);  // same weights, reused or not: same bits

  // New weights, noted as written: the result follows them.
  std::vector<float> w2 = random_floats(w_bytes / 4);
  s.put(kW, w2);
  versions.wrote(kW, kW + w_bytes);
  const std::vector<float> second = run();
  EXPECT_NE(second, first);
  {
    const kern::SramVersionsScope none(nullptr);  // no versions: packed afresh
    EXPECT_EQ(run(), second);
  }

  // Changed without a note: the panels packed from w2 are still used.
  EXPECT_EQ(run(), second);  // packs w2 again (the run without versions kept nothing)
  s.put(kW, random_floats(w_bytes / 4));
  EXPECT_EQ(run(), second);
  // A write elsewhere does not invalidate them; one byte of the weights does.
  versions.wrote(kOut, kOut + 64);
  EXPECT_EQ(run(), second);
  versions.wrote(kW + w_bytes - 1, kW + w_bytes);
  EXPECT_NE(run(), second);
}

// Every panel width and row tile of every ISA level computes each output as the FMA chain over
// k (fused where the build contracts, as Conv2d.Fp32IsTheFmaChainOverTheTaps), whether A is
// filled block by block (gemm_f32) or read in place tap by tap (gemm_f32_taps), alone or
// shared with the worker: so choosing a tile by the GEMM's shape (a 7-row tile for m = 49, a
// 48-column panel for n = 48) cannot change a bit. The shapes reach every AVX-512 tile.
TEST(Gemm, EveryTileComputesTheFmaChain) {
  IsaGuard guard;
  const uint64_t saved_threshold = kern::split_threshold();
  const size_t ns[] = {5, 16, 32, 48, 64, 112, 240};
  const size_t ms[] = {1,  2,  3,  5,  7,  8,  9,  13, 14, 15, 16, 17, 21,  28,  30, 35,
                       42, 49, 50, 56, 63, 70, 84, 90, 91, 96, 97, 98, 140, 196, 224};
  constexpr size_t kTaps = 3, kKc = 24, kK = kTaps * kKc;
  std::set<std::pair<size_t, size_t>> used;  // AVX-512 (nr, mr)
  for (const size_t n : ns) {
    const std::vector<float> b = random_floats(n * kK);
    for (const size_t m : ms) {
      const std::vector<float> a = random_floats(m * kK);  // row r, tap t at a[r * kK + t * kKc]
      const auto oracle = [&](bool fused) {
        std::vector<float> want(m * n);
        for (size_t r = 0; r < m; ++r)
          for (size_t j = 0; j < n; ++j) {
            float acc = 0.0f;
            for (size_t kk = 0; kk < kK; ++kk) {
              if (fused) {
                acc = std::fmaf(a[r * kK + kk], b[j * kK + kk], acc);
              } else {
                volatile float product = a[r * kK + kk] * b[j * kK + kk];
                acc = acc + product;
              }
            }
            want[r * n + j] = acc;
          }
        return want;
      };
      const std::vector<float> fused = oracle(true), unfused = oracle(false);
      for (kern::Isa isa : kIsas) {
        kern::set_kernel_isa(isa);
        const kern::PackedF32 packed(b.data(), kK, n, kK);
        if (kern::isa_at_least(kern::Isa::Avx512))
          used.emplace(packed.kernel().nr, packed.kernel().tile(m).mr);
        const std::vector<float>* want = nullptr;
        for (const uint64_t threshold : {UINT64_MAX, uint64_t{0}})
          for (const bool taps : {false, true}) {
            kern::set_split_threshold(threshold);
            std::vector<float> got(m * n, NAN);
            const auto store = [&](size_t m0, size_t rows, const float* acc, size_t ldc) {
              for (size_t r = 0; r < rows; ++r)
                std::copy_n(acc + r * ldc, n, got.data() + (m0 + r) * n);
            };
            if (taps) {
              kern::gemm_f32_taps(
                  packed, m, kTaps, kKc,
                  [&](size_t m0, size_t rows, const float** table, size_t ld, const float*) {
                    for (size_t t = 0; t < kTaps; ++t)
                      for (size_t r = 0; r < rows; ++r)
                        table[t * ld + r] = a.data() + (m0 + r) * kK + t * kKc;
                  },
                  store, threshold == 0);
            } else {
              kern::gemm_f32(
                  packed, m,
                  [&](size_t m0, size_t rows, float* dst, size_t lda) {
                    for (size_t r = 0; r < rows; ++r)
                      std::copy_n(a.data() + (m0 + r) * kK, kK, dst + r * lda);
                  },
                  store, threshold == 0);
            }
            if (want == nullptr)
              want =
                  std::memcmp(got.data(), unfused.data(), got.size() * 4) == 0 ? &unfused : &fused;
            size_t bad = 0;
            for (size_t i = 0; i < got.size(); ++i)
              if (std::memcmp(&got[i], &(*want)[i], 4) != 0 && bad++ < 3)
                ADD_FAILURE() << "isa " << static_cast<int>(isa) << " m " << m << " n " << n
                              << " taps " << taps << " split " << (threshold == 0) << " at "
                              << i / n << "," << i % n << ": want " << (*want)[i] << " got "
                              << got[i];
            EXPECT_EQ(bad, 0u);
          }
      }
    }
  }
  kern::set_split_threshold(saved_threshold);
  kern::set_kernel_isa(kern::Isa::Auto);
  if (!kern::isa_at_least(kern::Isa::Avx512)) GTEST_SKIP() << "no AVX-512 tiles to cover";
  for (const size_t n : {16, 32, 48}) {
    const kern::F32Kernel& kr = kern::f32_kernel(n);
    EXPECT_EQ(kr.nr, n);
    for (const kern::F32Tile& t : kr.tiles)
      EXPECT_TRUE(used.count({kr.nr, t.mr})) << kr.nr << " x " << t.mr;
  }
}

// A rows 4 KiB apart (k a multiple of 1024 floats) under a tile of more than 8 rows are copied
// to a wider stride (gemm_lda: they would share one L1 set), not read in place, and still give
// the FMA chain; under 8-row tiles they are read where they lie.
TEST(Gemm, RowsFourKibApartAreCopiedToAWiderStrideUnderTallTiles) {
  EXPECT_EQ(kern::gemm_lda(1024, 14), 1040u);
  EXPECT_EQ(kern::gemm_lda(2048, 16), 2064u);
  EXPECT_EQ(kern::gemm_lda(1024, 8), 1024u);
  EXPECT_EQ(kern::gemm_lda(1000, 16), 1000u);
  EXPECT_EQ(kern::gemm_lda(0, 16), 0u);
  IsaGuard guard;
  constexpr size_t kK = 1024, kM = 96;  // one block of whole tiles of every height used here
  const std::vector<float> a = random_floats(kM * kK);
  for (const size_t n : {16, 48}) {
    const std::vector<float> b = random_floats(n * kK);
    for (kern::Isa isa : kIsas) {
      kern::set_kernel_isa(isa);
      const kern::PackedF32 packed(b.data(), kK, n, kK);
      const size_t mr = packed.kernel().tile(kM).mr;
      std::vector<float> got(kM * n, NAN);
      size_t filled = 0;
      kern::gemm_f32(
          packed, kM,
          [&](size_t m0, size_t rows, float* dst, size_t lda) {
            EXPECT_EQ(lda, kern::gemm_lda(kK, mr));
            filled += rows;
            for (size_t r = 0; r < rows; ++r)
              std::copy_n(a.data() + (m0 + r) * kK, kK, dst + r * lda);
          },
          [&](size_t m0, size_t rows, const float* acc, size_t ldc) {
            for (size_t r = 0; r < rows; ++r)
              std::copy_n(acc + r * ldc, n, got.data() + (m0 + r) * n);
          },
          false, a.data());
      // Copied: every row is filled; in place: none.
      EXPECT_EQ(filled, kern::gemm_lda(kK, mr) != kK ? kM : 0)
          << "isa " << static_cast<int>(isa) << " n " << n << " mr " << mr;
      size_t bad = 0;
      for (size_t r = 0; r < kM; ++r)
        for (size_t j = 0; j < n; ++j) {
          float fused = 0.0f, unfused = 0.0f;
          for (size_t kk = 0; kk < kK; ++kk) {
            fused = std::fmaf(a[r * kK + kk], b[j * kK + kk], fused);
            volatile float product = a[r * kK + kk] * b[j * kK + kk];
            unfused = unfused + product;
          }
          const float v = got[r * n + j];
          if (std::memcmp(&v, &fused, 4) != 0 && std::memcmp(&v, &unfused, 4) != 0 && bad++ < 3)
            ADD_FAILURE() << "isa " << static_cast<int>(isa) << " n " << n << " at " << r << ","
                          << j << ": got " << v << ", chain " << fused << " / " << unfused;
        }
      EXPECT_EQ(bad, 0u);
    }
  }
  kern::set_kernel_isa(kern::Isa::Auto);
  if (!kern::isa_at_least(kern::Isa::Avx512)) GTEST_SKIP() << "no row tiles above 8 rows";
  EXPECT_GT(kern::f32_kernel(16).tile(kM).mr, 8u);  // the wider stride was taken
}

// --------------------------------------------------------------------------------- matmul

struct MatmulCase {
  uint32_t m, k, n, batch, a_bs, b_bs, out_bs;
  bool transpose_b;
};

const MatmulCase kMatmulCases[] = {
    {1, 1, 1, 1, 0, 0, 0, false},
    {17, 33, 45, 1, 0, 0, 0, false},
    {64, 64, 64, 1, 0, 0, 0, true},
    {5, 7, 9, 3, 5 * 7, 7 * 9, 5 * 9, false},                            // batched
    {5, 7, 9, 3, 5 * 7, 0, 5 * 9, true},                                 // B broadcast
    {5, 7, 9, 3, 0, 7 * 9, 5 * 9, false},                                // A broadcast
    {100, 130, 37, 2, 100 * 130 + 3, 130 * 37 + 1, 100 * 37 + 2, true},  // gaps
    {32, 1024, 16, 1, 0, 0, 0, false},  // A copied to a wider stride (gemm_lda)
};

struct MmSetup {
  npu_cmd cmd;
  std::vector<std::byte> a, b;
  std::vector<npu_chan_qparams> q;
  std::vector<float> bias;
};

MmSetup make_mm(const MatmulCase& mc, uint8_t a_t, uint8_t b_t, uint8_t out_t, Sram& s) {
  MmSetup st;
  st.cmd = zero_cmd(NPU_OP_MATMUL, NPU_ENGINE_MATRIX);
  auto& c = st.cmd.matmul;
  c.a_addr = kIn, c.b_addr = kW, c.chan_addr = kChan, c.out_addr = kOut;
  c.m = mc.m, c.k = mc.k, c.n = mc.n, c.batch = mc.batch;
  c.a_batch_stride = mc.a_bs, c.b_batch_stride = mc.b_bs, c.out_batch_stride = mc.out_bs;
  c.a_dtype = a_t, c.b_dtype = b_t, c.out_dtype = out_t;
  c.hdr.flags = mc.transpose_b ? NPU_MM_FLAG_TRANSPOSE_B : 0;
  c.fclamp_min = -INFINITY, c.fclamp_max = INFINITY;
  st.a = random_tensor(a_t, size_t{mc.a_bs} * (mc.batch - 1) + size_t{mc.m} * mc.k);
  st.b = random_tensor(b_t, size_t{mc.b_bs} * (mc.batch - 1) + size_t{mc.k} * mc.n);
  s.put(kIn, st.a);
  s.put(kW, st.b);
  return st;
}

TEST(Matmul, Int8AndUint8) {
  const uint8_t combos[][3] = {{NPU_DTYPE_INT8, NPU_DTYPE_INT8, NPU_DTYPE_INT8},
                               {NPU_DTYPE_UINT8, NPU_DTYPE_UINT8, NPU_DTYPE_UINT8},
                               {NPU_DTYPE_UINT8, NPU_DTYPE_INT8, NPU_DTYPE_INT32},
                               {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT8}};
  IsaGuard guard;
  for (const auto& mc : kMatmulCases)
    for (const auto& t : combos) {
      Sram s;
      MmSetup st = make_mm(mc, t[0], t[1], t[2], s);
      auto& c = st.cmd.matmul;
      c.a_zp = random_ints<int32_t>(1, dmin(t[0]), dmax(t[0]))[0];
      c.out_zp = t[2] == NPU_DTYPE_INT32 ? 0 : random_ints<int32_t>(1, dmin(t[2]), dmax(t[2]))[0];
      c.clamp_min = dmin(t[2]) + (t[2] == NPU_DTYPE_INT32 ? 0 : 2);
      c.clamp_max = dmax(t[2]);
      st.q = random_qparams(mc.n, t[1], mc.k, false);
      s.put(kChan, st.q);
      // Oracle.
      const size_t mn = size_t{mc.m} * mc.n;
      std::vector<int32_t> want(mn * mc.batch);
      for (uint32_t bt = 0; bt < mc.batch; ++bt)
        for (uint32_t i = 0; i < mc.m; ++i)
          for (uint32_t j = 0; j < mc.n; ++j) {
            int64_t acc = st.q[j].bias;
            for (uint32_t kk = 0; kk < mc.k; ++kk) {
              const size_t ai = size_t{bt} * mc.a_bs + size_t{i} * mc.k + kk;
              const size_t bi = size_t{bt} * mc.b_bs +
                                (mc.transpose_b ? size_t{j} * mc.k + kk : size_t{kk} * mc.n + j);
              acc += (ld_int(st.a, ai, t[0]) - c.a_zp) * (ld_int(st.b, bi, t[1]) - st.q[j].w_zp);
            }
            want[bt * mn + i * mc.n + j] =
                t[2] == NPU_DTYPE_INT32 ? static_cast<int32_t>(acc)
                                        : ref::requantize(acc, st.q[j].multiplier, st.q[j].shift,
                                                          c.out_zp, c.clamp_min, c.clamp_max);
          }
      for (kern::Isa isa : kIsas) {
        kern::set_kernel_isa(isa);
        run_matrix(st.cmd, s.span());
        size_t bad = 0;
        for (uint32_t bt = 0; bt < mc.batch; ++bt)
          for (size_t i = 0; i < mn; ++i) {
            int32_t got;
            if (t[2] == NPU_DTYPE_INT32)
              got = s.get<int32_t>(kOut + static_cast<uint32_t>((bt * mc.out_bs + i) * 4), 1)[0];
            else if (t[2] == NPU_DTYPE_INT8)
              got = s.get<int8_t>(kOut + static_cast<uint32_t>(bt * mc.out_bs + i), 1)[0];
            else
              got = s.get<uint8_t>(kOut + static_cast<uint32_t>(bt * mc.out_bs + i), 1)[0];
            if (got != want[bt * mn + i] && bad++ < 5)
              ADD_FAILURE() << "m" << mc.m << " k" << mc.k << " n" << mc.n << " isa "
                            << static_cast<int>(isa) << " at " << bt << "/" << i << ": want "
                            << want[bt * mn + i] << " got " << got;
          }
        EXPECT_EQ(bad, 0u);
      }
    }
}

TEST(Matmul, Fp32BiasClampBatched) {
  IsaGuard guard;
  for (const auto& mc : kMatmulCases)
    for (bool bias : {false, true}) {
      Sram s;
      MmSetup st = make_mm(mc, NPU_DTYPE_FP32, NPU_DTYPE_FP32, NPU_DTYPE_FP32, s);
      auto& c = st.cmd.matmul;
      if (bias) {
        c.hdr.flags |= NPU_MM_FLAG_BIAS;
        c.fclamp_min = -0.5f, c.fclamp_max = 1.0f;
        st.bias = random_floats(mc.n);
        s.put(kChan, st.bias);
      }
      for (kern::Isa isa : kIsas) {
        kern::set_kernel_isa(isa);
        run_matrix(st.cmd, s.span());
        size_t bad = 0;
        for (uint32_t bt = 0; bt < mc.batch; ++bt)
          for (uint32_t i = 0; i < mc.m; ++i)
            for (uint32_t j = 0; j < mc.n; ++j) {
              double acc = bias ? st.bias[j] : 0.0, mag = 1.0;
              for (uint32_t kk = 0; kk < mc.k; ++kk) {
                const size_t ai = size_t{bt} * mc.a_bs + size_t{i} * mc.k + kk;
                const size_t bi = size_t{bt} * mc.b_bs +
                                  (mc.transpose_b ? size_t{j} * mc.k + kk : size_t{kk} * mc.n + j);
                const double t = double{ld_f(st.a, ai)} * ld_f(st.b, bi);
                acc += t;
                mag += std::fabs(t);
              }
              acc = std::min<double>(std::max<double>(acc, c.fclamp_min), c.fclamp_max);
              const float got = s.get<float>(
                  kOut + static_cast<uint32_t>((size_t{bt} * mc.out_bs + size_t{i} * mc.n + j) * 4),
                  1)[0];
              if (!(std::fabs(got - acc) <= 1e-5 * mag) && bad++ < 5)
                ADD_FAILURE() << "m" << mc.m << " isa " << static_cast<int>(isa) << ": want " << acc
                              << " got " << got;
            }
        EXPECT_EQ(bad, 0u);
      }
    }
}

TEST(Matmul, HalfBatchedTransposedStrided) {
  IsaGuard guard;
  const struct {
    uint8_t dt, out_dt;
    bool bias;
  } modes[] = {{NPU_DTYPE_FP16, NPU_DTYPE_FP16, true},
               {NPU_DTYPE_FP16, NPU_DTYPE_FP32, false},
               {NPU_DTYPE_BF16, NPU_DTYPE_BF16, false},
               {NPU_DTYPE_BF16, NPU_DTYPE_FP32, true}};
  for (const auto& mode : modes)
    for (const auto& mc : kMatmulCases) {
      Sram s;
      MmSetup st = make_mm(mc, mode.dt, mode.dt, mode.out_dt, s);
      auto& c = st.cmd.matmul;
      if (mode.bias) {
        c.hdr.flags |= NPU_MM_FLAG_BIAS;
        c.fclamp_min = -0.5f, c.fclamp_max = 1.0f;
        st.bias = random_floats(mc.n);
        s.put(kChan, st.bias);
      }
      const size_t oes = isa::dtype_size(mode.out_dt);
      const double half_ulp = mode.out_dt == NPU_DTYPE_FP16   ? 0x1p-11
                              : mode.out_dt == NPU_DTYPE_BF16 ? 0x1p-8
                                                              : 0.0;
      const size_t out_n = size_t{mc.out_bs} * (mc.batch - 1) + size_t{mc.m} * mc.n;
      for (kern::Isa isa : kIsas) {
        kern::set_kernel_isa(isa);
        s.put(kOut, std::vector<uint8_t>(out_n * oes, 0));
        run_matrix(st.cmd, s.span());
        const auto raw = s.get<std::byte>(kOut, out_n * oes);
        const std::vector<std::byte> out(raw.begin(), raw.end());
        size_t bad = 0;
        for (uint32_t bt = 0; bt < mc.batch; ++bt)
          for (uint32_t i = 0; i < mc.m; ++i)
            for (uint32_t j = 0; j < mc.n; ++j) {
              double acc = mode.bias ? st.bias[j] : 0.0, mag = 1.0;
              for (uint32_t kk = 0; kk < mc.k; ++kk) {
                const size_t ai = size_t{bt} * mc.a_bs + size_t{i} * mc.k + kk;
                const size_t bi = size_t{bt} * mc.b_bs +
                                  (mc.transpose_b ? size_t{j} * mc.k + kk : size_t{kk} * mc.n + j);
                const double t = double{ld_f(st.a, ai, mode.dt)} * ld_f(st.b, bi, mode.dt);
                acc += t;
                mag += std::fabs(t);
              }
              acc = std::min<double>(std::max<double>(acc, c.fclamp_min), c.fclamp_max);
              const double got =
                  ld_f(out, size_t{bt} * mc.out_bs + size_t{i} * mc.n + j, mode.out_dt);
              const double tol = 1e-5 * mag + half_ulp * std::fabs(acc) + 0x1p-24;
              if (!(std::fabs(got - acc) <= tol) && bad++ < 5)
                ADD_FAILURE() << "m" << mc.m << " " << isa::dtype_name(mode.dt) << "->"
                              << isa::dtype_name(mode.out_dt) << " isa " << static_cast<int>(isa)
                              << ": want " << acc << " got " << got;
            }
        EXPECT_EQ(bad, 0u);
        // Batch gaps stay untouched.
        if (mc.batch > 1 && mc.out_bs > mc.m * mc.n) {
          const size_t gap = size_t{mc.m} * mc.n;  // first element after batch 0
          EXPECT_EQ(ld_f(out, gap, mode.out_dt), 0.0f);
        }
      }
    }
}

TEST(Matmul, Uint8ExtremesWithLongKStayExact) {
  // K above one int32 chunk of the tile kernels, all-255 operands: partial sums near 2^31.
  IsaGuard guard;
  Sram s;
  const uint32_t m = 3, k = 70001, n = 5;
  npu_cmd cmd = zero_cmd(NPU_OP_MATMUL, NPU_ENGINE_MATRIX);
  auto& c = cmd.matmul;
  c.a_addr = 0, c.b_addr = 0x100000, c.chan_addr = 0x200000, c.out_addr = 0x200100;
  c.m = m, c.k = k, c.n = n, c.batch = 1;
  c.a_dtype = NPU_DTYPE_UINT8, c.b_dtype = NPU_DTYPE_INT8, c.out_dtype = NPU_DTYPE_INT32;
  c.hdr.flags = NPU_MM_FLAG_TRANSPOSE_B;
  c.a_zp = 0, c.clamp_min = INT32_MIN, c.clamp_max = INT32_MAX;
  std::vector<uint8_t> a(size_t{m} * k, 255);
  std::vector<int8_t> b(size_t{n} * k, -128);
  a[7] = 3;
  b[k + 9] = 100;
  std::vector<npu_chan_qparams> q(n);
  s.put(c.a_addr, a);
  s.put(c.b_addr, b);
  s.put(c.chan_addr, q);
  for (kern::Isa isa : kIsas) {
    kern::set_kernel_isa(isa);
    run_matrix(cmd, s.span());
    const auto out = s.get<int32_t>(c.out_addr, size_t{m} * n);
    for (uint32_t i = 0; i < m; ++i)
      for (uint32_t j = 0; j < n; ++j) {
        int64_t acc = 0;
        for (uint32_t kk = 0; kk < k; ++kk)
          acc += int64_t{a[size_t{i} * k + kk]} * b[size_t{j} * k + kk];
        EXPECT_EQ(out[i * n + j], static_cast<int32_t>(acc)) << i << "," << j;
      }
  }
}

// ------------------------------------------------------------------------ split vs serial

// GEMMs shared with the worker (parallel.h) give the bytes of a serial run, in every mode and
// on every ISA level: serial (threshold UINT64_MAX) against split (threshold 0, so even the
// small cases split), the split run repeated so the worker takes part in some of them.

struct SplitGuard {
  uint64_t saved = kern::split_threshold();
  ~SplitGuard() { kern::set_split_threshold(saved); }
};

void expect_split_bit_exact(const npu_cmd& cmd, Sram& s, uint32_t out, size_t bytes,
                            const std::string& what) {
  IsaGuard isa_guard;
  SplitGuard split_guard;
  for (kern::Isa isa : kIsas) {
    kern::set_kernel_isa(isa);
    kern::set_split_threshold(UINT64_MAX);
    s.put(out, std::vector<uint8_t>(bytes + 16, 0xA5));
    run_matrix(cmd, s.span());
    const auto serial = s.get<uint8_t>(out, bytes + 16);
    kern::set_split_threshold(0);
    for (int rep = 0; rep < 3; ++rep) {
      s.put(out, std::vector<uint8_t>(bytes + 16, 0xA5));
      run_matrix(cmd, s.span());
      EXPECT_TRUE(s.get<uint8_t>(out, bytes + 16) == serial)
          << what << " isa " << static_cast<int>(isa) << " run " << rep;
    }
  }
}

struct Mode {
  uint8_t in, w, out;
};
const Mode kSplitModes[] = {
    {NPU_DTYPE_INT8, NPU_DTYPE_INT8, NPU_DTYPE_INT8},
    {NPU_DTYPE_UINT8, NPU_DTYPE_UINT8, NPU_DTYPE_UINT8},
    {NPU_DTYPE_UINT8, NPU_DTYPE_INT8, NPU_DTYPE_INT32},
    {NPU_DTYPE_FP32, NPU_DTYPE_FP32, NPU_DTYPE_FP32},
    {NPU_DTYPE_FP16, NPU_DTYPE_FP16, NPU_DTYPE_FP16},
    {NPU_DTYPE_BF16, NPU_DTYPE_BF16, NPU_DTYPE_FP32},
};

std::string mode_name(const Mode& m) {
  return std::string(isa::dtype_name(m.in)) + "x" + isa::dtype_name(m.w) + "->" +
         isa::dtype_name(m.out);
}

/// Quantization or bias parameters for a command of mode `m` with `n` output channels.
void set_params(uint16_t& flags, int32_t& in_zp, int32_t& out_zp, int32_t& cmin, int32_t& cmax,
                float& fmin, float& fmax, const Mode& m, size_t n, size_t k, Sram& s) {
  if (isa::dtype_is_float(m.in)) {
    flags |= NPU_MM_FLAG_BIAS;
    fmin = -0.5f, fmax = 2.0f;
    s.put(kChan, random_floats(n));
    return;
  }
  in_zp = random_ints<int32_t>(1, dmin(m.in), dmax(m.in))[0];
  out_zp = m.out == NPU_DTYPE_INT32 ? 0 : random_ints<int32_t>(1, dmin(m.out), dmax(m.out))[0];
  cmin = dmin(m.out), cmax = dmax(m.out);
  s.put(kChan, random_qparams(n, m.w, k, false));
}

const ConvCase kSplitConvCases[] = {
    {30, 30, 32, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  // 10M MACs, 10 blocks
    {28, 28, 96, 80, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},  // pointwise: direct rows
    {24, 24, 32, 48, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1},  // grouped, 2M MACs per group
    {33, 31, 16, 24, 3, 3, 1, 2, 2, 2, 2, 1, 1, 1, 1},  // stride and dilation
    {7, 7, 256, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   // 49 rows: blocks under kGemmMB
};

TEST(SplitGemm, ConvBitExactWithSerial) {
  const uint64_t before = kern::worker_chunks();
  std::vector<ConvCase> cases(std::begin(kSplitConvCases), std::end(kSplitConvCases));
  cases.insert(cases.end(), std::begin(kConvCases), std::end(kConvCases));
  for (const auto& cc : cases)
    for (const Mode& m : kSplitModes) {
      Sram s;
      ConvSetup st = make_conv(cc, m.in, m.w, m.out, s);
      auto& c = st.cmd.conv2d;
      set_params(c.hdr.flags, c.in_zp, c.out_zp, c.clamp_min, c.clamp_max, c.fclamp_min,
                 c.fclamp_max, m, static_cast<size_t>(cc.oc), static_cast<size_t>(st.k), s);
      const size_t bytes = static_cast<size_t>(st.oh * st.ow * cc.oc) * isa::dtype_size(m.out);
      expect_split_bit_exact(st.cmd, s, kOut, bytes, name(cc) + " " + mode_name(m));
    }
  if (std::thread::hardware_concurrency() >= 2) {
    EXPECT_GT(kern::worker_chunks(), before) << "the worker never took part";
  }
}

TEST(SplitGemm, ConvInPlaceStaysCorrect) {
  // Output over the input (the same tile): a split run must equal the serial one, which it
  // does only if the command is not split at all.
  const ConvCase cc{30, 30, 32, 32, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  for (const Mode& m : {kSplitModes[0], kSplitModes[3]}) {
    Sram s;
    ConvSetup st = make_conv(cc, m.in, m.w, m.out, s);
    auto& c = st.cmd.conv2d;
    set_params(c.hdr.flags, c.in_zp, c.out_zp, c.clamp_min, c.clamp_max, c.fclamp_min, c.fclamp_max,
               m, static_cast<size_t>(cc.oc), static_cast<size_t>(st.k), s);
    c.out_addr = c.in_addr + 96 * 32 * static_cast<uint32_t>(isa::dtype_size(m.in));  // a block on
    const size_t bytes = static_cast<size_t>(30 * 30 * 32) * isa::dtype_size(m.out);
    IsaGuard isa_guard;
    SplitGuard split_guard;
    kern::set_split_threshold(UINT64_MAX);
    run_matrix(st.cmd, s.span());
    const auto serial = s.get<uint8_t>(kIn, bytes + 96 * 32 * 4);
    s.put(kIn, st.in);
    kern::set_split_threshold(0);
    run_matrix(st.cmd, s.span());
    EXPECT_TRUE(s.get<uint8_t>(kIn, bytes + 96 * 32 * 4) == serial) << mode_name(m);
  }
}

TEST(SplitGemm, MatmulBitExactWithSerial) {
  const uint64_t before = kern::worker_chunks();
  std::vector<MatmulCase> cases = {
      {300, 128, 64, 1, 0, 0, 0, false},                                // 2.5M MACs
      {500, 200, 96, 2, 500 * 200, 0, 500 * 96, true},                  // B broadcast, transposed
      {400, 160, 70, 2, 400 * 160 + 5, 160 * 70, 400 * 70 + 3, false},  // gaps
  };
  cases.insert(cases.end(), std::begin(kMatmulCases), std::end(kMatmulCases));
  for (const auto& mc : cases)
    for (const Mode& m : kSplitModes) {
      Sram s;
      MmSetup st = make_mm(mc, m.in, m.w, m.out, s);
      auto& c = st.cmd.matmul;
      set_params(c.hdr.flags, c.a_zp, c.out_zp, c.clamp_min, c.clamp_max, c.fclamp_min,
                 c.fclamp_max, m, mc.n, mc.k, s);
      const size_t bytes =
          (size_t{mc.out_bs} * (mc.batch - 1) + size_t{mc.m} * mc.n) * isa::dtype_size(m.out);
      expect_split_bit_exact(st.cmd, s, kOut, bytes,
                             "m" + std::to_string(mc.m) + " k" + std::to_string(mc.k) + " n" +
                                 std::to_string(mc.n) + " " + mode_name(m));
    }
  if (std::thread::hardware_concurrency() >= 2) {
    EXPECT_GT(kern::worker_chunks(), before) << "the worker never took part";
  }
}

}  // namespace
}  // namespace npu::emu::test

// The reference matrix engine: CONV2D and MATMUL, decoded into the reference operators of
// npu/ref/conv.h and npu/ref/matmul.h over operands copied out of SRAM.
#include <functional>

#include "exec.h"
#include "npu/isa/dtype.h"
#include "npu/isa/half.h"
#include "npu/ref/conv.h"
#include "npu/ref/matmul.h"

namespace npu::ref::detail {
namespace {

/// One SRAM operand of a matrix command: `count` elements at `addr`, named `field`.
struct Operand {
  uint32_t addr;
  uint64_t count;
  const char* field;
};

/// The three tensors of a matrix command (input / weights or A / B, output) and the names of
/// their dtype fields.
struct MatrixOperands {
  Operand in, w, out;
  uint8_t in_dtype, w_dtype, out_dtype;
  const char *in_dtype_field, *w_dtype_field;
  const char* fp32_rule;  // "fp32 must be used for in, w and out together"
};

/// Reads in, w (then calls `before_out`) and out as TIn, TW, TOut, runs `f(in, w, out)` on
/// spans of them and writes out back.
template <typename TIn, typename TW, typename TOut, typename Before, typename F>
Expected<void> run_typed(std::span<std::byte> sram, const char* op, const MatrixOperands& m,
                         Before&& before_out, F&& f) {
  auto in = read_sram<TIn>(sram, m.in.addr, m.in.count, at(op, m.in.field));
  if (!in) return in.error();
  auto w = read_sram<TW>(sram, m.w.addr, m.w.count, at(op, m.w.field));
  if (!w) return w.error();
  NPU_TRY(before_out());
  auto out = read_sram<TOut>(sram, m.out.addr, m.out.count, at(op, m.out.field));
  if (!out) return out.error();
  NPU_TRY(f(std::span<const TIn>(*in), std::span<const TW>(*w), std::span<TOut>(*out)));
  return write_sram(sram, m.out.addr, *out, at(op, m.out.field));
}

/// The fp32 datapath: every dtype fp32, the float bias[channels] at chan_addr read when
/// NPU_MM_FLAG_BIAS is set; `f(in, w, bias, out)`.
template <typename F>
Expected<void> run_f32(std::span<std::byte> sram, const char* op, const MatrixOperands& m,
                       uint16_t flags, uint32_t chan_addr, uint64_t channels, F&& f) {
  if (m.in_dtype != NPU_DTYPE_FP32 || m.w_dtype != NPU_DTYPE_FP32 ||
      m.out_dtype != NPU_DTYPE_FP32) {
    return make_error(EINVAL, std::string(op) + ": dtypes: " + m.fp32_rule);
  }
  std::vector<float> bias;
  auto read_bias = [&]() -> Expected<void> {
    if (!(flags & NPU_MM_FLAG_BIAS)) return ok();
    auto b = read_sram<float>(sram, chan_addr, channels, at(op, "chan_addr"));
    if (!b) return b.error();
    bias = std::move(*b);
    return ok();
  };
  return run_typed<float, float, float>(sram, op, m, read_bias, [&](auto in, auto w, auto out) {
    return f(in, w, std::span<const float>(bias), out);
  });
}

/// The integer datapath: int8/uint8 inputs, an int8/uint8/int32 output and the channel params
/// at chan_addr; `f(in, w, chan, out)` on typed vectors.
template <typename F>
Expected<void> run_int(std::span<std::byte> sram, const char* op, const MatrixOperands& m,
                       uint32_t chan_addr, uint64_t channels, F&& f) {
  auto chan = read_sram<npu_chan_qparams>(sram, chan_addr, channels, at(op, "chan_addr"));
  if (!chan) return chan.error();
  auto none = [] { return ok(); };
  return with_byte_type(m.in_dtype, op, m.in_dtype_field, [&](auto in_tag) {
    using TIn = typename decltype(in_tag)::type;
    return with_byte_type(m.w_dtype, op, m.w_dtype_field, [&](auto w_tag) {
      using TW = typename decltype(w_tag)::type;
      return with_int_type(m.out_dtype, op, "out_dtype", [&](auto out_tag) {
        using TOut = typename decltype(out_tag)::type;
        return run_typed<TIn, TW, TOut>(sram, op, m, none, [&](auto in, auto w, auto out) {
          return f(in, w, std::span<const npu_chan_qparams>(*chan), out);
        });
      });
    });
  });
}

/// Widens `count` half elements of `dtype` at `addr` to fp32 (exact).
Expected<std::vector<float>> read_half(std::span<std::byte> sram, uint8_t dtype, uint32_t addr,
                                       uint64_t count, const std::string& what) {
  auto h = read_sram<uint16_t>(sram, addr, count, what);
  if (!h) return h.error();
  std::vector<float> f(h->size());
  for (size_t i = 0; i < f.size(); ++i) f[i] = isa::half_to_fp32(dtype, (*h)[i]);
  return f;
}

/// The half datapaths (ISA 1.1): (fp16, fp16, fp16|fp32) and (bf16, bf16, bf16|fp32). Inputs
/// and weights widen exactly to fp32, `f(in, w, bias, out)` computes in fp32 (products of
/// widened halves are exact), and a half output is rounded to nearest even at the end; only
/// the elements `written(i)` names are stored (batch strides may leave gaps).
template <typename F>
Expected<void> run_half(std::span<std::byte> sram, const char* op, const MatrixOperands& m,
                        uint16_t flags, uint32_t chan_addr, uint64_t channels,
                        const std::function<bool(uint64_t)>& written, F&& f) {
  if (m.w_dtype != m.in_dtype || (m.out_dtype != m.in_dtype && m.out_dtype != NPU_DTYPE_FP32)) {
    return make_error(EINVAL, std::string(op) + ": dtypes: " + isa::dtype_name(m.in_dtype) +
                                  " mode needs " + m.w_dtype_field + " " +
                                  isa::dtype_name(m.in_dtype) + " and out_dtype " +
                                  isa::dtype_name(m.in_dtype) + " or fp32");
  }
  auto in = read_half(sram, m.in_dtype, m.in.addr, m.in.count, at(op, m.in.field));
  if (!in) return in.error();
  auto w = read_half(sram, m.w_dtype, m.w.addr, m.w.count, at(op, m.w.field));
  if (!w) return w.error();
  std::vector<float> bias;
  if (flags & NPU_MM_FLAG_BIAS) {
    auto b = read_sram<float>(sram, chan_addr, channels, at(op, "chan_addr"));
    if (!b) return b.error();
    bias = std::move(*b);
  }
  if (m.out_dtype == NPU_DTYPE_FP32) {
    auto out = read_sram<float>(sram, m.out.addr, m.out.count, at(op, m.out.field));
    if (!out) return out.error();
    NPU_TRY(f(std::span<const float>(*in), std::span<const float>(*w), std::span<const float>(bias),
              std::span<float>(*out)));
    return write_sram(sram, m.out.addr, *out, at(op, m.out.field));
  }
  auto out = read_sram<uint16_t>(sram, m.out.addr, m.out.count, at(op, m.out.field));
  if (!out) return out.error();
  std::vector<float> acc(out->size());
  NPU_TRY(f(std::span<const float>(*in), std::span<const float>(*w), std::span<const float>(bias),
            std::span<float>(acc)));
  for (uint64_t i = 0; i < acc.size(); ++i) {
    if (written(i)) (*out)[i] = isa::fp32_to_half(m.out_dtype, acc[i]);
  }
  return write_sram(sram, m.out.addr, *out, at(op, m.out.field));
}

/// Runs `f32(in, w, bias, out)` for the float modes (fp32 directly, fp16/bf16 through
/// run_half), else `integer(in, w, chan, out)`.
template <typename F32, typename Int>
Expected<void> run_matrix(std::span<std::byte> sram, const char* op, const MatrixOperands& m,
                          uint16_t flags, uint32_t chan_addr, uint64_t channels,
                          const std::function<bool(uint64_t)>& written, F32&& f32, Int&& integer) {
  if (isa::dtype_is_half(m.in_dtype)) {
    return run_half(sram, op, m, flags, chan_addr, channels, written, f32);
  }
  if (m.in_dtype == NPU_DTYPE_FP32 || m.w_dtype == NPU_DTYPE_FP32 ||
      m.out_dtype == NPU_DTYPE_FP32) {
    return run_f32(sram, op, m, flags, chan_addr, channels, f32);
  }
  return run_int(sram, op, m, chan_addr, channels, integer);
}

}  // namespace

Expected<void> exec_conv2d(const npu_cmd_conv2d& c, std::span<std::byte> sram, FlatDram&) {
  const char* op = "conv2d";
  Conv2dShape s;
  s.in_h = c.in_h, s.in_w = c.in_w, s.in_c = c.in_c;
  s.out_h = c.out_h, s.out_w = c.out_w, s.out_c = c.out_c;
  s.k_h = c.k_h, s.k_w = c.k_w, s.groups = c.groups;
  s.stride_h = c.stride_h, s.stride_w = c.stride_w, s.dil_h = c.dil_h, s.dil_w = c.dil_w;
  s.pad_top = c.pad_top, s.pad_left = c.pad_left, s.pad_bottom = c.pad_bottom;
  s.pad_right = c.pad_right;
  if (auto r = check_conv2d_shape(s); !r) return r;
  const MatrixOperands m{
      {c.in_addr, uint64_t{s.in_h} * s.in_w * s.in_c, "in_addr"},
      {c.w_addr, uint64_t{s.out_c} * s.k_h * s.k_w * (s.in_c / s.groups), "w_addr"},
      {c.out_addr, uint64_t{s.out_h} * s.out_w * s.out_c, "out_addr"},
      c.in_dtype,
      c.w_dtype,
      c.out_dtype,
      "in_dtype",
      "w_dtype",
      "fp32 must be used for in, w and out together"};
  const IntOutput o{c.in_zp, c.out_zp, c.clamp_min, c.clamp_max};
  return run_matrix(
      sram, op, m, c.hdr.flags, c.chan_addr, s.out_c, [](uint64_t) { return true; },
      [&](auto in, auto w, auto bias, auto out) {
        return conv2d_f32(s, in, w, bias, c.fclamp_min, c.fclamp_max, out);
      },
      [&](auto in, auto w, auto chan, auto out) { return conv2d_int(s, in, w, chan, o, out); });
}

Expected<void> exec_matmul(const npu_cmd_matmul& c, std::span<std::byte> sram, FlatDram&) {
  const char* op = "matmul";
  MatmulShape s;
  s.m = c.m, s.k = c.k, s.n = c.n, s.batch = c.batch;
  s.a_batch_stride = c.a_batch_stride, s.b_batch_stride = c.b_batch_stride;
  s.out_batch_stride = c.out_batch_stride;
  s.transpose_b = (c.hdr.flags & NPU_MM_FLAG_TRANSPOSE_B) != 0;
  if (s.m == 0 || s.k == 0 || s.n == 0 || s.batch == 0) {
    return make_error(EINVAL, "matmul: m, k, n and batch must be >= 1");
  }
  const MatrixOperands m{{c.a_addr, matmul_a_extent(s), "a_addr"},
                         {c.b_addr, matmul_b_extent(s), "b_addr"},
                         {c.out_addr, matmul_out_extent(s), "out_addr"},
                         c.a_dtype,
                         c.b_dtype,
                         c.out_dtype,
                         "a_dtype",
                         "b_dtype",
                         "fp32 must be used for a, b and out together"};
  const IntOutput o{c.a_zp, c.out_zp, c.clamp_min, c.clamp_max};
  // Output elements of batch bt are [bt * out_batch_stride + i * n + j]; the rest are gaps.
  auto written = [&s](uint64_t idx) {
    if (s.batch == 1 || s.out_batch_stride == 0) return idx < uint64_t{s.m} * s.n;
    return idx % s.out_batch_stride < uint64_t{s.m} * s.n;
  };
  return run_matrix(
      sram, op, m, c.hdr.flags, c.chan_addr, s.n, written,
      [&](auto a, auto b, auto bias, auto out) {
        return matmul_f32(s, a, b, bias, c.fclamp_min, c.fclamp_max, out);
      },
      [&](auto a, auto b, auto chan, auto out) { return matmul_int(s, a, b, chan, o, out); });
}

}  // namespace npu::ref::detail

// The reference vector engine: ELTWISE .. REDUCE, each decoded into the reference operators
// of npu/ref/*.h over operands copied out of SRAM.
#include <array>
#include <type_traits>

#include "exec.h"
#include "npu/ref/elementwise.h"
#include "npu/ref/pool.h"
#include "npu/ref/quant.h"
#include "npu/ref/reduce.h"
#include "npu/ref/softmax.h"
#include "npu/ref/tensor.h"
#include "npu/ref/transpose.h"

namespace npu::ref::detail {
namespace {

Dims4 dims_of(const __u32 (&shape)[4]) {
  return {shape[0], shape[1], shape[2], shape[3]};
}
Strides4 strides_of(const npu_vtensor& t) {
  return {t.stride[0], t.stride[1], t.stride[2], t.stride[3]};
}

/// A strided SRAM operand copied out of SRAM: its elements from addr over the view's extent.
template <typename T>
Expected<std::vector<T>> read_view(std::span<const std::byte> sram, const npu_vtensor& t,
                                   const Dims4& shape, const std::string& what) {
  const uint64_t extent = strided_extent(shape, strides_of(t));
  if (extent == UINT64_MAX) return make_error(EINVAL, what + ": view extent overflows");
  return read_sram<T>(sram, t.addr, extent, what);
}

}  // namespace

Expected<void> exec_eltwise(const npu_cmd_eltwise& c, std::span<std::byte> sram, FlatDram&) {
  const char* op = "eltwise";
  if (c.op < NPU_ELTWISE_ADD || c.op > NPU_ELTWISE_PRELU) {
    return make_error(EINVAL, "eltwise: op: unknown op " + std::to_string(c.op));
  }
  if (c.dtype != NPU_DTYPE_FP32 && (c.op == NPU_ELTWISE_POW || c.op == NPU_ELTWISE_PRELU)) {
    return make_error(EINVAL, "eltwise: op: pow and prelu are fp32 only");
  }
  const Dims4 shape = dims_of(c.shape);
  return with_any_type(c.dtype, op, "dtype", [&](auto tag) -> Expected<void> {
    using T = typename decltype(tag)::type;
    auto a = read_view<T>(sram, c.a, shape, at(op, "a"));
    if (!a) return a.error();
    auto b = read_view<T>(sram, c.b, shape, at(op, "b"));
    if (!b) return b.error();
    auto out = read_view<T>(sram, c.out, shape, at(op, "out"));
    if (!out) return out.error();
    const View4<const T> va{*a, strides_of(c.a)};
    const View4<const T> vb{*b, strides_of(c.b)};
    const View4<T> vo{*out, strides_of(c.out)};
    Expected<void> r;
    if constexpr (std::is_same_v<T, float>) {
      r = eltwise_f32(c.op, shape, va, vb, vo);
    } else {
      r = eltwise_int_tensor<T>(c.op, shape, va, vb, vo);
    }
    if (!r) return r;
    return write_sram(sram, c.out.addr, *out, at(op, "out"));
  });
}

Expected<void> exec_activation(const npu_cmd_activation& c, std::span<std::byte> sram, FlatDram&) {
  const char* op = "activation";
  if (c.func < NPU_ACT_COPY || c.func > NPU_ACT_MAX) {
    return make_error(EINVAL, "activation: func: unknown function " + std::to_string(c.func));
  }
  const bool int_ok = c.func == NPU_ACT_COPY || c.func == NPU_ACT_RELU || c.func == NPU_ACT_CLIP ||
                      c.func == NPU_ACT_ABS || c.func == NPU_ACT_NEG;
  if (c.dtype != NPU_DTYPE_FP32 && !int_ok) {
    return make_error(EINVAL,
                      "activation: func: function " + std::to_string(c.func) + " is fp32 only");
  }
  const Dims4 shape = dims_of(c.shape);
  if (c.dtype == NPU_DTYPE_FP16 || c.dtype == NPU_DTYPE_BF16) {  // ISA 1.1: copy only
    if (c.func != NPU_ACT_COPY) {
      return make_error(EINVAL, "activation: func: only copy takes fp16/bf16, got function " +
                                    std::to_string(c.func));
    }
    auto in = read_view<uint16_t>(sram, c.in, shape, at(op, "in"));
    if (!in) return in.error();
    auto out = read_view<uint16_t>(sram, c.out, shape, at(op, "out"));
    if (!out) return out.error();
    map4(
        shape, View4<uint16_t>{*out, strides_of(c.out)}, [](uint16_t x) { return x; },
        View4<const uint16_t>{*in, strides_of(c.in)});
    return write_sram(sram, c.out.addr, *out, at(op, "out"));
  }
  return with_any_type(c.dtype, op, "dtype", [&](auto tag) -> Expected<void> {
    using T = typename decltype(tag)::type;
    auto in = read_view<T>(sram, c.in, shape, at(op, "in"));
    if (!in) return in.error();
    auto out = read_view<T>(sram, c.out, shape, at(op, "out"));
    if (!out) return out.error();
    const View4<const T> vi{*in, strides_of(c.in)};
    const View4<T> vo{*out, strides_of(c.out)};
    Expected<void> r;
    if constexpr (std::is_same_v<T, float>) {
      r = activation_f32(c.func, c.alpha, c.beta, shape, vi, vo);
    } else {
      r = activation_int_tensor<T>(c.func, c.alpha, c.beta, shape, vi, vo);
    }
    if (!r) return r;
    return write_sram(sram, c.out.addr, *out, at(op, "out"));
  });
}

Expected<void> exec_pool(const npu_cmd_pool& c, std::span<std::byte> sram, FlatDram&) {
  const char* op = "pool";
  Pool2dShape s;
  s.in_h = c.in_h, s.in_w = c.in_w, s.channels = c.channels;
  s.out_h = c.out_h, s.out_w = c.out_w, s.k_h = c.k_h, s.k_w = c.k_w;
  s.stride_h = c.stride_h, s.stride_w = c.stride_w;
  s.pad_top = c.pad_top, s.pad_left = c.pad_left, s.pad_bottom = c.pad_bottom;
  s.pad_right = c.pad_right;
  s.count_include_pad = (c.hdr.flags & NPU_POOL_FLAG_COUNT_PAD) != 0;
  const uint64_t in_count = uint64_t{s.in_h} * s.in_w * s.channels;
  const uint64_t out_count = uint64_t{s.out_h} * s.out_w * s.channels;
  auto run = [&](auto tag) -> Expected<void> {
    using T = typename decltype(tag)::type;
    auto in = read_sram<T>(sram, c.in_addr, in_count, at(op, "in_addr"));
    if (!in) return in.error();
    auto out = read_sram<T>(sram, c.out_addr, out_count, at(op, "out_addr"));
    if (!out) return out.error();
    Expected<void> r;
    if constexpr (std::is_same_v<T, float>) {
      r = pool2d_f32(c.kind, s, *in, *out);
    } else {
      r = pool2d_int<T>(c.kind, s, *in, *out);
    }
    if (!r) return r;
    return write_sram(sram, c.out_addr, *out, at(op, "out_addr"));
  };
  if (c.dtype == NPU_DTYPE_FP32) return run(Tag<float>{});
  return with_byte_type(c.dtype, op, "dtype", run);
}

Expected<void> exec_softmax(const npu_cmd_softmax& c, std::span<std::byte> sram, FlatDram&) {
  const char* op = "softmax";
  const uint64_t count = uint64_t{c.rows} * c.len;
  auto in = read_sram<float>(sram, c.in_addr, count, at(op, "in_addr"));
  if (!in) return in.error();
  std::vector<float> out(in->size());
  const bool log = (c.hdr.flags & NPU_SOFTMAX_FLAG_LOG) != 0;
  if (auto r = softmax_f32(c.rows, c.len, *in, out, log); !r) return r;
  return write_sram(sram, c.out_addr, out, at(op, "out_addr"));
}

Expected<void> exec_scale_shift(const npu_cmd_scale_shift& c, std::span<std::byte> sram,
                                FlatDram&) {
  const char* op = "scale_shift";
  const uint64_t count = uint64_t{c.outer} * c.channels;
  auto in = read_sram<float>(sram, c.in_addr, count, at(op, "in_addr"));
  if (!in) return in.error();
  auto scale = read_sram<float>(sram, c.scale_addr, c.channels, at(op, "scale_addr"));
  if (!scale) return scale.error();
  auto shift = read_sram<float>(sram, c.shift_addr, c.channels, at(op, "shift_addr"));
  if (!shift) return shift.error();
  std::vector<float> out(in->size());
  if (auto r = scale_shift_f32(c.outer, c.channels, *in, *scale, *shift, out); !r) return r;
  return write_sram(sram, c.out_addr, out, at(op, "out_addr"));
}

Expected<void> exec_quant(const npu_cmd_quant& c, std::span<std::byte> sram, FlatDram&) {
  const bool quant = c.hdr.opcode == NPU_OP_QUANTIZE;
  const char* op = quant ? "quantize" : "dequantize";
  std::vector<npu_qparam> params;
  QuantParams p;
  p.scale = c.scale;
  p.zp = c.zp;
  p.channels = c.channels;
  p.inner = c.inner;
  if (c.channels > 1) {
    if (c.inner == 0) return make_error(EINVAL, at(op, "inner") + ": must be >= 1");
    auto pr = read_sram<npu_qparam>(sram, c.params_addr, c.channels, at(op, "params_addr"));
    if (!pr) return pr.error();
    params = std::move(*pr);
    p.params = params;
  }
  if (quant) {
    if (c.in_dtype != NPU_DTYPE_FP32) return bad_dtype(op, "in_dtype", c.in_dtype);
    auto in = read_sram<float>(sram, c.in_addr, c.count, at(op, "in_addr"));
    if (!in) return in.error();
    return with_byte_type(c.out_dtype, op, "out_dtype", [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      std::vector<T> out(in->size());
      if (auto r = quantize_tensor<T>(*in, out, p); !r) return r;
      return write_sram(sram, c.out_addr, out, at(op, "out_addr"));
    });
  }
  if (c.out_dtype != NPU_DTYPE_FP32) return bad_dtype(op, "out_dtype", c.out_dtype);
  return with_int_type(c.in_dtype, op, "in_dtype", [&](auto tag) -> Expected<void> {
    using T = typename decltype(tag)::type;
    auto in = read_sram<T>(sram, c.in_addr, c.count, at(op, "in_addr"));
    if (!in) return in.error();
    std::vector<float> out(in->size());
    if (auto r = dequantize_tensor<T>(*in, out, p); !r) return r;
    return write_sram(sram, c.out_addr, out, at(op, "out_addr"));
  });
}

Expected<void> exec_requant(const npu_cmd_requant& c, std::span<std::byte> sram, FlatDram&) {
  const char* op = "requantize";
  const RequantParams p{c.multiplier, c.shift, c.in_zp, c.out_zp, c.clamp_min, c.clamp_max};
  return with_int_type(c.in_dtype, op, "in_dtype", [&](auto in_tag) {
    using TIn = typename decltype(in_tag)::type;
    return with_byte_type(c.out_dtype, op, "out_dtype", [&](auto out_tag) -> Expected<void> {
      using TOut = typename decltype(out_tag)::type;
      auto in = read_sram<TIn>(sram, c.in_addr, c.count, at(op, "in_addr"));
      if (!in) return in.error();
      std::vector<TOut> out(in->size());
      if (auto r = requantize_tensor<TIn, TOut>(*in, out, p); !r) return r;
      return write_sram(sram, c.out_addr, out, at(op, "out_addr"));
    });
  });
}

Expected<void> exec_transpose(const npu_cmd_transpose& c, std::span<std::byte> sram, FlatDram&) {
  const char* op = "transpose";
  const Dims4 shape = dims_of(c.in_shape);
  const std::array<uint8_t, 4> perm{c.perm[0], c.perm[1], c.perm[2], c.perm[3]};
  if (auto r = check_perm(perm); !r) return r;
  const uint64_t count = element_count(shape);
  auto run = [&](auto tag) -> Expected<void> {
    using T = typename decltype(tag)::type;
    auto in = read_sram<T>(sram, c.in_addr, count, at(op, "in_addr"));
    if (!in) return in.error();
    std::vector<T> out(in->size());
    if (auto r = transpose4<T>(shape, perm, *in, out); !r) return r;
    return write_sram(sram, c.out_addr, out, at(op, "out_addr"));
  };
  switch (c.elem_size) {
    case 1:
      return run(Tag<uint8_t>{});
    case 2:
      return run(Tag<uint16_t>{});
    case 4:
      return run(Tag<uint32_t>{});
    default:
      return make_error(
          EINVAL, "transpose: elem_size: expected 1, 2 or 4, got " + std::to_string(c.elem_size));
  }
}

Expected<void> exec_reduce(const npu_cmd_reduce& c, std::span<std::byte> sram, FlatDram&) {
  const char* op = "reduce";
  auto in =
      read_sram<float>(sram, c.in_addr, uint64_t{c.outer} * c.len * c.inner, at(op, "in_addr"));
  if (!in) return in.error();
  std::vector<float> out(uint64_t{c.outer} * c.inner);
  if (out.size() > in->size() && c.len != 0) return make_error(EINVAL, "reduce: shape overflow");
  if (auto r = reduce_f32(c.kind, c.outer, c.len, c.inner, *in, out); !r) return r;
  return write_sram(sram, c.out_addr, out, at(op, "out_addr"));
}

Expected<void> exec_moments(const npu_cmd_moments& c, std::span<std::byte> sram, FlatDram&) {
  const char* op = "moments";
  auto in =
      read_sram<float>(sram, c.in_addr, uint64_t{c.outer} * c.len * c.inner, at(op, "in_addr"));
  if (!in) return in.error();
  std::vector<float> mean(uint64_t{c.outer} * c.inner), sq(mean.size());
  if (auto r = moments_f32(c.outer, c.len, c.inner, *in, mean, sq); !r) return r;
  if (auto r = write_sram(sram, c.mean_addr, mean, at(op, "mean_addr")); !r) return r;
  return write_sram(sram, c.sq_addr, sq, at(op, "sq_addr"));
}

}  // namespace npu::ref::detail

// Reference interpreter: decodes each command (by memcpy into its struct, no type punning),
// copies its SRAM operands into typed vectors after a bounds check, runs the reference
// operator and copies the result back.
#include "npu/ref/interp.h"

#include "npu/isa/validate.h"

#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "npu/ref/conv.h"
#include "npu/ref/elementwise.h"
#include "npu/ref/matmul.h"
#include "npu/ref/pool.h"
#include "npu/ref/quant.h"
#include "npu/ref/reduce.h"
#include "npu/ref/softmax.h"
#include "npu/ref/tensor.h"
#include "npu/ref/transpose.h"

namespace npu::ref {

// ---------------------------------------------------------------------------------------------
// FlatDram

Expected<void> FlatDram::map(uint64_t va, std::span<std::byte> mem) {
  if (mem.empty()) return make_error(EINVAL, "dram map: empty range at va " + std::to_string(va));
  const uint64_t size = mem.size();
  const uint64_t last = va + (size - 1);
  if (last < va)
    return make_error(EINVAL, "dram map: range at va " + std::to_string(va) + " wraps around");
  // The first mapping starting after va, and the one before it.
  auto next = ranges_.upper_bound(va);
  if (next != ranges_.end() && next->first <= last) {
    return make_error(EINVAL, "dram map: range at va " + std::to_string(va) + " overlaps va " +
                                  std::to_string(next->first));
  }
  if (next != ranges_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + (prev->second.size() - 1) >= va) {
      return make_error(EINVAL, "dram map: range at va " + std::to_string(va) + " overlaps va " +
                                    std::to_string(prev->first));
    }
  }
  ranges_.emplace(va, mem);
  return ok();
}

bool FlatDram::unmap(uint64_t va) {
  return ranges_.erase(va) != 0;
}

Expected<std::span<std::byte>> FlatDram::lookup(uint64_t va, uint64_t size) const {
  auto fail = [&] {
    return make_error(EFAULT, "dram: range [" + std::to_string(va) + ", +" + std::to_string(size) +
                                  ") is not mapped");
  };
  auto next = ranges_.upper_bound(va);
  if (next == ranges_.begin()) return fail();
  const auto& [start, mem] = *std::prev(next);
  const uint64_t offset = va - start;  // va >= start
  if (offset >= mem.size() || size > mem.size() - offset) return fail();
  return mem.subspan(offset, size);
}

// ---------------------------------------------------------------------------------------------
// Helpers

namespace {

std::string at(const char* op, const char* field) {
  return std::string(op) + ": " + field;
}

/// Error unless SRAM bytes [addr, addr + bytes) exist.
Expected<void> check_sram(std::span<const std::byte> sram, uint64_t addr, uint64_t bytes,
                          const std::string& what) {
  if (addr > sram.size() || bytes > sram.size() - addr) {
    return make_error(EFAULT, what + ": sram bytes [" + std::to_string(addr) + ", +" +
                                  std::to_string(bytes) + ") exceed sram size " +
                                  std::to_string(sram.size()));
  }
  return ok();
}

/// Copies `count` elements of T from SRAM at `addr` (bounds-checked) into a vector.
template <typename T>
Expected<std::vector<T>> read_sram(std::span<const std::byte> sram, uint64_t addr, uint64_t count,
                                   const std::string& what) {
  if (count > sram.size() / sizeof(T)) {
    return make_error(EFAULT, what + ": " + std::to_string(count) + " elements of " +
                                  std::to_string(sizeof(T)) + " bytes exceed sram size " +
                                  std::to_string(sram.size()));
  }
  if (auto r = check_sram(sram, addr, count * sizeof(T), what); !r) return r.error();
  std::vector<T> v(count);
  if (count != 0) std::memcpy(v.data(), sram.data() + addr, count * sizeof(T));
  return v;
}

/// Copies `v` into SRAM at `addr` (bounds-checked).
template <typename T>
Expected<void> write_sram(std::span<std::byte> sram, uint64_t addr, const std::vector<T>& v,
                          const std::string& what) {
  const uint64_t bytes = uint64_t{v.size()} * sizeof(T);
  if (auto r = check_sram(sram, addr, bytes, what); !r) return r;
  if (bytes != 0) std::memcpy(sram.data() + addr, v.data(), bytes);
  return ok();
}

/// Byte extent of a 3-D box: (n[2]-1)*st[2] + (n[1]-1)*st[1] + (n[0]-1)*st[0] + es, each
/// n >= 1. False on overflow.
bool extent3(const uint64_t (&n)[3], const std::array<uint64_t, 3>& st, uint64_t es,
             uint64_t& out) {
  uint64_t total = es;
  for (int d = 0; d < 3; ++d) {
    uint64_t term = 0;
    if (n[d] == 0 || __builtin_mul_overflow(n[d] - 1, st[d], &term) ||
        __builtin_add_overflow(total, term, &total)) {
      return false;
    }
  }
  out = total;
  return true;
}

template <typename T>
T decode(const npu_cmd& cmd) {
  static_assert(sizeof(T) == sizeof(npu_cmd) && std::is_trivially_copyable_v<T>);
  T out;
  std::memcpy(&out, &cmd, sizeof(T));
  return out;
}

Expected<void> bad_dtype(const char* op, const char* field, uint8_t dtype) {
  return make_error(EINVAL, at(op, field) + ": unsupported dtype " + std::to_string(dtype));
}

template <typename T>
struct Tag {
  using type = T;
};

/// Calls f(Tag<T>{}) for an int8/uint8 dtype.
template <typename F>
Expected<void> with_byte_type(uint8_t dtype, const char* op, const char* field, F&& f) {
  switch (dtype) {
    case NPU_DTYPE_INT8:
      return f(Tag<int8_t>{});
    case NPU_DTYPE_UINT8:
      return f(Tag<uint8_t>{});
    default:
      return bad_dtype(op, field, dtype);
  }
}

/// Calls f(Tag<T>{}) for an int8/uint8/int32 dtype.
template <typename F>
Expected<void> with_int_type(uint8_t dtype, const char* op, const char* field, F&& f) {
  switch (dtype) {
    case NPU_DTYPE_INT8:
      return f(Tag<int8_t>{});
    case NPU_DTYPE_UINT8:
      return f(Tag<uint8_t>{});
    case NPU_DTYPE_INT32:
      return f(Tag<int32_t>{});
    default:
      return bad_dtype(op, field, dtype);
  }
}

/// Calls f(Tag<T>{}) for any dtype, fp32 included.
template <typename F>
Expected<void> with_any_type(uint8_t dtype, const char* op, const char* field, F&& f) {
  if (dtype == NPU_DTYPE_FP32) return f(Tag<float>{});
  return with_int_type(dtype, op, field, f);
}

// ---------------------------------------------------------------------------------------------
// DMA

Expected<void> exec_dma(const npu_cmd_dma& c, bool load, std::span<std::byte> sram,
                        FlatDram& dram) {
  const char* op = load ? "dma_load" : "dma_store";
  const uint64_t es = c.elem_size;
  if (es != 1 && es != 2 && es != 4) {
    return make_error(EINVAL,
                      at(op, "elem_size") + ": expected 1, 2 or 4, got " + std::to_string(es));
  }
  for (int d = 0; d < 3; ++d) {
    if (c.size[d] == 0) return make_error(EINVAL, at(op, "size") + ": must be >= 1");
  }
  if (!load) {
    for (int d = 0; d < 3; ++d) {
      if (c.pad_before[d] != 0 || c.pad_after[d] != 0) {
        return make_error(EINVAL, at(op, "pad_before/pad_after") + ": must be 0 for a store");
      }
    }
  }
  // SRAM box (with padding) and DRAM box, and their byte extents (overflow-checked).
  uint64_t box[3];
  for (int d = 0; d < 3; ++d) box[d] = uint64_t{c.size[d]} + c.pad_before[d] + c.pad_after[d];
  uint64_t sram_bytes = 0;
  uint64_t dram_bytes = 0;
  if (!extent3(box, {es, c.sram_stride[0], c.sram_stride[1]}, es, sram_bytes)) {
    return make_error(EINVAL, at(op, "sram_stride") + ": box extent overflows");
  }
  const uint64_t size[3] = {c.size[0], c.size[1], c.size[2]};
  if (!extent3(size, {c.dram_stride[0], c.dram_stride[1], c.dram_stride[2]}, es, dram_bytes)) {
    return make_error(EINVAL, at(op, "dram_stride") + ": box extent overflows");
  }
  if (auto r = check_sram(sram, c.sram_addr, sram_bytes, at(op, "sram_addr")); !r) return r;
  auto mem = dram.lookup(c.dram_addr, dram_bytes);
  if (!mem) return make_error(mem.error().code, at(op, "dram_addr") + ": " + mem.error().message);
  // Writes that cannot all be distinct overlap; refusing them also bounds the loop by the
  // destination's size.
  const uint64_t(&n)[3] = load ? box : size;
  uint64_t written = 0;
  const bool too_many = __builtin_mul_overflow(n[0], n[1], &written) ||
                        __builtin_mul_overflow(written, n[2], &written);
  const uint64_t dest_bytes = load ? sram_bytes : dram_bytes;
  if (too_many || written > dest_bytes / es) {
    return make_error(
        EINVAL, at(op, load ? "sram_stride" : "dram_stride") + ": destination elements overlap");
  }
  std::byte pad[4];
  for (uint64_t i = 0; i < 4; ++i) pad[i] = static_cast<std::byte>((c.pad_value >> (8 * i)) & 0xff);

  for (uint64_t z = 0; z < box[2]; ++z) {
    for (uint64_t y = 0; y < box[1]; ++y) {
      for (uint64_t x = 0; x < box[0]; ++x) {
        std::byte* s =
            sram.data() + c.sram_addr + z * c.sram_stride[1] + y * c.sram_stride[0] + x * es;
        const bool inside = z >= c.pad_before[2] && z < c.pad_before[2] + uint64_t{c.size[2]} &&
                            y >= c.pad_before[1] && y < c.pad_before[1] + uint64_t{c.size[1]} &&
                            x >= c.pad_before[0] && x < c.pad_before[0] + uint64_t{c.size[0]};
        if (!inside) {
          std::memcpy(s, pad, es);
          continue;
        }
        std::byte* d = mem->data() + (z - c.pad_before[2]) * c.dram_stride[2] +
                       (y - c.pad_before[1]) * c.dram_stride[1] +
                       (x - c.pad_before[0]) * c.dram_stride[0];
        if (load) {
          std::memmove(s, d, es);
        } else {
          std::memmove(d, s, es);
        }
      }
    }
  }
  return ok();
}

// ---------------------------------------------------------------------------------------------
// Matrix engine

Expected<void> exec_conv2d(const npu_cmd_conv2d& c, std::span<std::byte> sram) {
  const char* op = "conv2d";
  Conv2dShape s;
  s.in_h = c.in_h, s.in_w = c.in_w, s.in_c = c.in_c;
  s.out_h = c.out_h, s.out_w = c.out_w, s.out_c = c.out_c;
  s.k_h = c.k_h, s.k_w = c.k_w, s.groups = c.groups;
  s.stride_h = c.stride_h, s.stride_w = c.stride_w, s.dil_h = c.dil_h, s.dil_w = c.dil_w;
  s.pad_top = c.pad_top, s.pad_left = c.pad_left, s.pad_bottom = c.pad_bottom;
  s.pad_right = c.pad_right;
  if (auto r = check_conv2d_shape(s); !r) return r;
  const uint64_t in_count = uint64_t{s.in_h} * s.in_w * s.in_c;
  const uint64_t w_count = uint64_t{s.out_c} * s.k_h * s.k_w * (s.in_c / s.groups);
  const uint64_t out_count = uint64_t{s.out_h} * s.out_w * s.out_c;

  if (c.in_dtype == NPU_DTYPE_FP32 || c.w_dtype == NPU_DTYPE_FP32 ||
      c.out_dtype == NPU_DTYPE_FP32) {
    if (c.in_dtype != NPU_DTYPE_FP32 || c.w_dtype != NPU_DTYPE_FP32 ||
        c.out_dtype != NPU_DTYPE_FP32) {
      return make_error(EINVAL, "conv2d: dtypes: fp32 must be used for in, w and out together");
    }
    auto in = read_sram<float>(sram, c.in_addr, in_count, at(op, "in_addr"));
    if (!in) return in.error();
    auto w = read_sram<float>(sram, c.w_addr, w_count, at(op, "w_addr"));
    if (!w) return w.error();
    std::vector<float> bias;
    if (c.hdr.flags & NPU_MM_FLAG_BIAS) {
      auto b = read_sram<float>(sram, c.chan_addr, s.out_c, at(op, "chan_addr"));
      if (!b) return b.error();
      bias = std::move(*b);
    }
    auto out = read_sram<float>(sram, c.out_addr, out_count, at(op, "out_addr"));
    if (!out) return out.error();
    if (auto r = conv2d_f32(s, *in, *w, bias, c.fclamp_min, c.fclamp_max, *out); !r) return r;
    return write_sram(sram, c.out_addr, *out, at(op, "out_addr"));
  }

  auto chan = read_sram<npu_chan_qparams>(sram, c.chan_addr, s.out_c, at(op, "chan_addr"));
  if (!chan) return chan.error();
  const IntOutput o{c.in_zp, c.out_zp, c.clamp_min, c.clamp_max};
  return with_byte_type(c.in_dtype, op, "in_dtype", [&](auto in_tag) {
    using TIn = typename decltype(in_tag)::type;
    return with_byte_type(c.w_dtype, op, "w_dtype", [&](auto w_tag) {
      using TW = typename decltype(w_tag)::type;
      return with_int_type(c.out_dtype, op, "out_dtype", [&](auto out_tag) -> Expected<void> {
        using TOut = typename decltype(out_tag)::type;
        auto in = read_sram<TIn>(sram, c.in_addr, in_count, at(op, "in_addr"));
        if (!in) return in.error();
        auto w = read_sram<TW>(sram, c.w_addr, w_count, at(op, "w_addr"));
        if (!w) return w.error();
        auto out = read_sram<TOut>(sram, c.out_addr, out_count, at(op, "out_addr"));
        if (!out) return out.error();
        if (auto r = conv2d_int<TIn, TW, TOut>(s, *in, *w, *chan, o, *out); !r) return r;
        return write_sram(sram, c.out_addr, *out, at(op, "out_addr"));
      });
    });
  });
}

Expected<void> exec_matmul(const npu_cmd_matmul& c, std::span<std::byte> sram) {
  const char* op = "matmul";
  MatmulShape s;
  s.m = c.m, s.k = c.k, s.n = c.n, s.batch = c.batch;
  s.a_batch_stride = c.a_batch_stride, s.b_batch_stride = c.b_batch_stride;
  s.out_batch_stride = c.out_batch_stride;
  s.transpose_b = (c.hdr.flags & NPU_MM_FLAG_TRANSPOSE_B) != 0;
  if (s.m == 0 || s.k == 0 || s.n == 0 || s.batch == 0) {
    return make_error(EINVAL, "matmul: m, k, n and batch must be >= 1");
  }
  const uint64_t a_count = matmul_a_extent(s);
  const uint64_t b_count = matmul_b_extent(s);
  const uint64_t out_count = matmul_out_extent(s);

  if (c.a_dtype == NPU_DTYPE_FP32 || c.b_dtype == NPU_DTYPE_FP32 || c.out_dtype == NPU_DTYPE_FP32) {
    if (c.a_dtype != NPU_DTYPE_FP32 || c.b_dtype != NPU_DTYPE_FP32 ||
        c.out_dtype != NPU_DTYPE_FP32) {
      return make_error(EINVAL, "matmul: dtypes: fp32 must be used for a, b and out together");
    }
    auto a = read_sram<float>(sram, c.a_addr, a_count, at(op, "a_addr"));
    if (!a) return a.error();
    auto b = read_sram<float>(sram, c.b_addr, b_count, at(op, "b_addr"));
    if (!b) return b.error();
    std::vector<float> bias;
    if (c.hdr.flags & NPU_MM_FLAG_BIAS) {
      auto bb = read_sram<float>(sram, c.chan_addr, s.n, at(op, "chan_addr"));
      if (!bb) return bb.error();
      bias = std::move(*bb);
    }
    auto out = read_sram<float>(sram, c.out_addr, out_count, at(op, "out_addr"));
    if (!out) return out.error();
    if (auto r = matmul_f32(s, *a, *b, bias, c.fclamp_min, c.fclamp_max, *out); !r) return r;
    return write_sram(sram, c.out_addr, *out, at(op, "out_addr"));
  }

  auto chan = read_sram<npu_chan_qparams>(sram, c.chan_addr, s.n, at(op, "chan_addr"));
  if (!chan) return chan.error();
  const IntOutput o{c.a_zp, c.out_zp, c.clamp_min, c.clamp_max};
  return with_byte_type(c.a_dtype, op, "a_dtype", [&](auto a_tag) {
    using TA = typename decltype(a_tag)::type;
    return with_byte_type(c.b_dtype, op, "b_dtype", [&](auto b_tag) {
      using TB = typename decltype(b_tag)::type;
      return with_int_type(c.out_dtype, op, "out_dtype", [&](auto out_tag) -> Expected<void> {
        using TOut = typename decltype(out_tag)::type;
        auto a = read_sram<TA>(sram, c.a_addr, a_count, at(op, "a_addr"));
        if (!a) return a.error();
        auto b = read_sram<TB>(sram, c.b_addr, b_count, at(op, "b_addr"));
        if (!b) return b.error();
        auto out = read_sram<TOut>(sram, c.out_addr, out_count, at(op, "out_addr"));
        if (!out) return out.error();
        if (auto r = matmul_int<TA, TB, TOut>(s, *a, *b, *chan, o, *out); !r) return r;
        return write_sram(sram, c.out_addr, *out, at(op, "out_addr"));
      });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Vector engine

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

Expected<void> exec_eltwise(const npu_cmd_eltwise& c, std::span<std::byte> sram) {
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

Expected<void> exec_activation(const npu_cmd_activation& c, std::span<std::byte> sram) {
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

Expected<void> exec_pool(const npu_cmd_pool& c, std::span<std::byte> sram) {
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

Expected<void> exec_softmax(const npu_cmd_softmax& c, std::span<std::byte> sram) {
  const char* op = "softmax";
  const uint64_t count = uint64_t{c.rows} * c.len;
  auto in = read_sram<float>(sram, c.in_addr, count, at(op, "in_addr"));
  if (!in) return in.error();
  std::vector<float> out(in->size());
  const bool log = (c.hdr.flags & NPU_SOFTMAX_FLAG_LOG) != 0;
  if (auto r = softmax_f32(c.rows, c.len, *in, out, log); !r) return r;
  return write_sram(sram, c.out_addr, out, at(op, "out_addr"));
}

Expected<void> exec_scale_shift(const npu_cmd_scale_shift& c, std::span<std::byte> sram) {
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

Expected<void> exec_quant(const npu_cmd_quant& c, bool quant, std::span<std::byte> sram) {
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

Expected<void> exec_requant(const npu_cmd_requant& c, std::span<std::byte> sram) {
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

Expected<void> exec_transpose(const npu_cmd_transpose& c, std::span<std::byte> sram) {
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

Expected<void> exec_reduce(const npu_cmd_reduce& c, std::span<std::byte> sram) {
  const char* op = "reduce";
  auto in =
      read_sram<float>(sram, c.in_addr, uint64_t{c.outer} * c.len * c.inner, at(op, "in_addr"));
  if (!in) return in.error();
  std::vector<float> out(uint64_t{c.outer} * c.inner);
  if (out.size() > in->size() && c.len != 0) return make_error(EINVAL, "reduce: shape overflow");
  if (auto r = reduce_f32(c.kind, c.outer, c.len, c.inner, *in, out); !r) return r;
  return write_sram(sram, c.out_addr, out, at(op, "out_addr"));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Entry points

Expected<void> execute(const npu_cmd& cmd, std::span<std::byte> sram, FlatDram& dram) {
  switch (cmd.bytes[0]) {  // the opcode, read through the byte view
    case NPU_OP_END:
    case NPU_OP_FENCE:
    case NPU_OP_MARKER:
    case NPU_OP_NOP:
    case NPU_OP_SEM_SIGNAL:
    case NPU_OP_SEM_WAIT:
      return ok();
    case NPU_OP_DMA_LOAD:
      return exec_dma(decode<npu_cmd_dma>(cmd), true, sram, dram);
    case NPU_OP_DMA_STORE:
      return exec_dma(decode<npu_cmd_dma>(cmd), false, sram, dram);
    case NPU_OP_CONV2D:
      return exec_conv2d(decode<npu_cmd_conv2d>(cmd), sram);
    case NPU_OP_MATMUL:
      return exec_matmul(decode<npu_cmd_matmul>(cmd), sram);
    case NPU_OP_ELTWISE:
      return exec_eltwise(decode<npu_cmd_eltwise>(cmd), sram);
    case NPU_OP_ACTIVATION:
      return exec_activation(decode<npu_cmd_activation>(cmd), sram);
    case NPU_OP_POOL:
      return exec_pool(decode<npu_cmd_pool>(cmd), sram);
    case NPU_OP_SOFTMAX:
      return exec_softmax(decode<npu_cmd_softmax>(cmd), sram);
    case NPU_OP_SCALE_SHIFT:
      return exec_scale_shift(decode<npu_cmd_scale_shift>(cmd), sram);
    case NPU_OP_QUANTIZE:
      return exec_quant(decode<npu_cmd_quant>(cmd), true, sram);
    case NPU_OP_DEQUANTIZE:
      return exec_quant(decode<npu_cmd_quant>(cmd), false, sram);
    case NPU_OP_REQUANTIZE:
      return exec_requant(decode<npu_cmd_requant>(cmd), sram);
    case NPU_OP_TRANSPOSE:
      return exec_transpose(decode<npu_cmd_transpose>(cmd), sram);
    case NPU_OP_REDUCE:
      return exec_reduce(decode<npu_cmd_reduce>(cmd), sram);
    default:
      return make_error(EINVAL, "opcode: unknown opcode " + std::to_string(cmd.bytes[0]));
  }
}

Expected<void> run_program(std::span<const npu_cmd> cmds, std::span<std::byte> sram,
                           FlatDram& dram) {
  size_t end = cmds.size();
  for (size_t i = 0; i < cmds.size(); ++i) {
    if (cmds[i].bytes[0] == NPU_OP_END) {
      end = i;
      break;
    }
  }
  if (end == cmds.size()) {
    return make_error(EINVAL,
                      "program: no end command in " + std::to_string(cmds.size()) + " commands");
  }
  for (size_t i = 0; i < end; ++i) {
    if (auto r = execute(cmds[i], sram, dram); !r) {
      return make_error(r.error().code, "command " + std::to_string(i) + ": " + r.error().message);
    }
  }
  return ok();
}

}  // namespace npu::ref

// The CHECK column of the opcode table: each command's payload rules (docs/isa.md, "Validity
// rules"), after validate.cpp has checked the opcode, engine, header and flags. The dispatch
// at the end is generated from npu/isa/opcodes.def.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "common.h"
#include "npu/isa/opcodes.h"
#include "payload_checker.h"
#include "semantics.h"

namespace npu::isa::detail {

// ---------------------------------------------------------------------------------------------
// PayloadChecker

Error PayloadChecker::error(const std::string& what) const {
  return make_error(EINVAL, "command " + std::to_string(index_) + " (" +
                                opcode_name(cmd_.hdr.opcode) + "): " + what);
}

Error PayloadChecker::field_error(const std::string& field, const std::string& what) const {
  return error("field " + field + ": " + what);
}

Expected<void> PayloadChecker::zero(const char* field, const void* p, size_t n) const {
  const auto* b = static_cast<const uint8_t*>(p);
  // Every command of every submitted job passes here: test 8 bytes at a time first.
  uint64_t any = 0;
  size_t at = 0;
  for (; at + 8 <= n; at += 8) {
    uint64_t w;
    std::memcpy(&w, b + at, 8);
    any |= w;
  }
  for (; at < n; ++at) any |= b[at];
  if (any == 0) return ok();
  for (size_t i = 0; i < n; ++i) {
    if (b[i] != 0) {
      return field_error(std::string(field) + (n > 1 ? "[" + std::to_string(i) + "]" : ""),
                         "must be zero, got " + hex(b[i]));
    }
  }
  return ok();
}

Expected<void> PayloadChecker::zero_value(const char* field, uint64_t v) const {
  if (v != 0) return field_error(field, "must be zero, got " + hex(v));
  return ok();
}

Expected<void> PayloadChecker::positive(const std::string& field, uint64_t v) const {
  if (v == 0) return field_error(field, "must be >= 1, got 0");
  return ok();
}

Expected<void> PayloadChecker::in_range(const std::string& field, int64_t v, int64_t lo,
                                        int64_t hi) const {
  if (v < lo || v > hi) {
    return field_error(field, "expected " + std::to_string(lo) + ".." + std::to_string(hi) +
                                  ", got " + std::to_string(v));
  }
  return ok();
}

Expected<void> PayloadChecker::equal(const char* field, uint64_t expected, uint64_t got) const {
  if (expected != got) {
    return field_error(field,
                       "expected " + std::to_string(expected) + ", got " + std::to_string(got));
  }
  return ok();
}

Expected<void> PayloadChecker::dtype_in(const char* field, uint8_t d,
                                        std::initializer_list<uint8_t> allowed,
                                        const char* expected) const {
  for (uint8_t x : allowed) {
    if (d == x) return ok();
  }
  const std::string label = dtype_size(d) ? dtype_name(d) : "dtype " + std::to_string(d);
  return field_error(field, std::string("expected ") + expected + ", got " + label);
}

Expected<void> PayloadChecker::elem_size(uint32_t v) const {
  if (v != 1 && v != 2 && v != 4) {
    return field_error("elem_size", "expected 1, 2 or 4, got " + std::to_string(v));
  }
  return ok();
}

Expected<void> PayloadChecker::window(const char* out_field, const char* k_field, uint64_t in,
                                      uint64_t pad0, uint64_t pad1, uint64_t k, uint64_t dil,
                                      uint64_t stride, uint64_t out) const {
  const uint64_t padded = in + pad0 + pad1;
  const uint64_t extent = dil * (k - 1) + 1;
  if (extent > padded) {
    return field_error(k_field, "window of " + std::to_string(extent) +
                                    " larger than the padded input of " + std::to_string(padded));
  }
  return equal(out_field, (padded - extent) / stride + 1, out);
}

Expected<void> PayloadChecker::ordered_clamps(int64_t cmin, int64_t cmax) const {
  if (cmin > cmax) {
    return field_error("clamp_min", "greater than clamp_max (" + std::to_string(cmin) + " > " +
                                        std::to_string(cmax) + ")");
  }
  return ok();
}

// ---------------------------------------------------------------------------------------------
// Control commands

Expected<void> check_end(const PayloadChecker& k, const npu_cmd_end& c) {
  return k.zero("reserved", c.reserved, sizeof c.reserved);
}

Expected<void> check_fence(const PayloadChecker& k, const npu_cmd_fence& c) {
  return k.zero("reserved", c.reserved, sizeof c.reserved);
}

Expected<void> check_marker(const PayloadChecker& k, const npu_cmd_marker& c) {
  return k.zero("reserved", c.reserved, sizeof c.reserved);
}

Expected<void> check_sem(const PayloadChecker& k, const npu_cmd_sem& c) {
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  const DeviceConfig& cfg = k.cfg();
  if (c.sem >= cfg.num_semaphores) {
    return k.field_error("sem", "semaphore " + std::to_string(c.sem) +
                                    " out of range (device has " +
                                    std::to_string(cfg.num_semaphores) + ")");
  }
  return k.in_range("count", c.count, 1, cfg.semaphore_max);
}

// ---------------------------------------------------------------------------------------------
// DMA and matrix engines

Expected<void> check_dma(const PayloadChecker& k, const npu_cmd_dma& c) {
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(k.elem_size(c.elem_size));
  for (int i = 0; i < 3; ++i) NPU_TRY(k.positive("size[" + std::to_string(i) + "]", c.size[i]));
  if (c.hdr.opcode == NPU_OP_DMA_STORE) {
    for (int i = 0; i < 3; ++i) {
      if (c.pad_before[i] != 0 || c.pad_after[i] != 0) {
        return k.field_error(
            std::string(c.pad_before[i] ? "pad_before[" : "pad_after[") + std::to_string(i) + "]",
            "dma_store must have zero padding");
      }
    }
    NPU_TRY(k.zero_field("pad_value", c.pad_value));
  }
  // Conversion (since 1.1): both dtypes 0 (a plain copy) or both float; elem_size is the SRAM
  // side's element size.
  if (c.dram_dtype == 0 && c.sram_dtype == 0) return ok();
  static constexpr const char* kFloat = "fp32, fp16 or bf16 (or 0 on both sides: no conversion)";
  NPU_TRY(k.dtype_in("dram_dtype", c.dram_dtype, {NPU_DTYPE_FP32, NPU_DTYPE_FP16, NPU_DTYPE_BF16},
                     kFloat));
  NPU_TRY(k.dtype_in("sram_dtype", c.sram_dtype, {NPU_DTYPE_FP32, NPU_DTYPE_FP16, NPU_DTYPE_BF16},
                     kFloat));
  if (c.elem_size != dtype_size(c.sram_dtype)) {
    return k.field_error("elem_size", "expected " + std::to_string(dtype_size(c.sram_dtype)) +
                                          " (the size of sram_dtype " + dtype_name(c.sram_dtype) +
                                          "), got " + std::to_string(c.elem_size));
  }
  return ok();
}

namespace {

bool is_8bit(uint8_t d) {
  return d == NPU_DTYPE_INT8 || d == NPU_DTYPE_UINT8;
}

/// CONV2D's and MATMUL's datapath: dtypes, zero points and clamps (their fields in the same
/// order, under the names of the first input and the weights).
struct MmQuant {
  const char *in_field, *w_field, *in_zp_field;
  uint8_t in_dt, w_dt, out_dt;
  int32_t in_zp, out_zp, cmin, cmax;
  float fmin, fmax;
};

Expected<void> check_mm_quant(const PayloadChecker& k, const MmQuant& q) {
  if (dtype_is_float(q.in_dt)) {
    if (q.in_dt == NPU_DTYPE_FP32) {
      NPU_TRY(k.dtype_in(q.w_field, q.w_dt, {NPU_DTYPE_FP32}, "fp32 (fp32 mode)"));
      NPU_TRY(k.dtype_in("out_dtype", q.out_dt, {NPU_DTYPE_FP32}, "fp32 (fp32 mode)"));
    } else if (q.in_dt == NPU_DTYPE_FP16) {
      NPU_TRY(k.dtype_in(q.w_field, q.w_dt, {NPU_DTYPE_FP16}, "fp16 (fp16 mode)"));
      NPU_TRY(k.dtype_in("out_dtype", q.out_dt, {NPU_DTYPE_FP16, NPU_DTYPE_FP32},
                         "fp16 or fp32 (fp16 mode)"));
    } else {
      NPU_TRY(k.dtype_in(q.w_field, q.w_dt, {NPU_DTYPE_BF16}, "bf16 (bf16 mode)"));
      NPU_TRY(k.dtype_in("out_dtype", q.out_dt, {NPU_DTYPE_BF16, NPU_DTYPE_FP32},
                         "bf16 or fp32 (bf16 mode)"));
    }
    if (std::isnan(q.fmin)) return k.field_error("fclamp_min", "must not be nan");
    if (std::isnan(q.fmax)) return k.field_error("fclamp_max", "must not be nan");
    if (q.fmin > q.fmax) {
      return k.field_error("fclamp_min", "greater than fclamp_max (" + std::to_string(q.fmin) +
                                             " > " + std::to_string(q.fmax) + ")");
    }
    return ok();
  }
  NPU_TRY(k.dtype_in(q.in_field, q.in_dt, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8},
                     "int8, uint8, fp32, fp16 or bf16"));
  NPU_TRY(k.dtype_in(q.w_field, q.w_dt, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8}, "int8 or uint8"));
  NPU_TRY(k.dtype_in("out_dtype", q.out_dt, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT32},
                     "int8, uint8 or int32"));
  if (k.hdr().flags & NPU_MM_FLAG_BIAS) {
    return k.field_error("flags", "bias flag is fp32 only (integer bias is in the channel params)");
  }
  NPU_TRY(k.in_range(q.in_zp_field, q.in_zp, dtype_min(q.in_dt), dtype_max(q.in_dt)));
  if (is_8bit(q.out_dt)) {
    NPU_TRY(k.in_range("out_zp", q.out_zp, dtype_min(q.out_dt), dtype_max(q.out_dt)));
    NPU_TRY(k.in_range("clamp_min", q.cmin, dtype_min(q.out_dt), dtype_max(q.out_dt)));
    NPU_TRY(k.in_range("clamp_max", q.cmax, dtype_min(q.out_dt), dtype_max(q.out_dt)));
  }
  return k.ordered_clamps(q.cmin, q.cmax);
}

/// Every named field is >= 1.
Expected<void> all_positive(const PayloadChecker& k,
                            std::initializer_list<std::pair<const char*, uint64_t>> fields) {
  for (const auto& [name, value] : fields) NPU_TRY(k.positive(name, value));
  return ok();
}

}  // namespace

Expected<void> check_conv2d(const PayloadChecker& k, const npu_cmd_conv2d& c) {
  NPU_TRY(k.zero_field("reserved0", c.reserved0));
  NPU_TRY(k.zero_field("reserved1", c.reserved1));
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(
      check_mm_quant(k, {"in_dtype", "w_dtype", "in_zp", c.in_dtype, c.w_dtype, c.out_dtype,
                         c.in_zp, c.out_zp, c.clamp_min, c.clamp_max, c.fclamp_min, c.fclamp_max}));
  NPU_TRY(all_positive(k, {{"in_h", c.in_h},
                           {"in_w", c.in_w},
                           {"in_c", c.in_c},
                           {"out_c", c.out_c},
                           {"k_h", c.k_h},
                           {"k_w", c.k_w},
                           {"groups", c.groups},
                           {"stride_h", c.stride_h},
                           {"stride_w", c.stride_w},
                           {"dil_h", c.dil_h},
                           {"dil_w", c.dil_w}}));
  if (c.in_c % c.groups != 0) {
    return k.field_error(
        "groups", std::to_string(c.groups) + " does not divide in_c " + std::to_string(c.in_c));
  }
  if (c.out_c % c.groups != 0) {
    return k.field_error(
        "groups", std::to_string(c.groups) + " does not divide out_c " + std::to_string(c.out_c));
  }
  NPU_TRY(k.window("out_h", "k_h", c.in_h, c.pad_top, c.pad_bottom, c.k_h, c.dil_h, c.stride_h,
                   c.out_h));
  return k.window("out_w", "k_w", c.in_w, c.pad_left, c.pad_right, c.k_w, c.dil_w, c.stride_w,
                  c.out_w);
}

Expected<void> check_matmul(const PayloadChecker& k, const npu_cmd_matmul& c) {
  NPU_TRY(k.zero_field("reserved0", c.reserved0));
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(
      check_mm_quant(k, {"a_dtype", "b_dtype", "a_zp", c.a_dtype, c.b_dtype, c.out_dtype, c.a_zp,
                         c.out_zp, c.clamp_min, c.clamp_max, c.fclamp_min, c.fclamp_max}));
  return all_positive(k, {{"m", c.m}, {"k", c.k}, {"n", c.n}, {"batch", c.batch}});
}

// ---------------------------------------------------------------------------------------------
// Vector engine

namespace {

/// Vector-engine arithmetic has no fp16/bf16 datapath (ISA 1.1): only activation copy and
/// transpose move half elements; everything else refuses them with this message.
Expected<void> no_half(const PayloadChecker& k, const char* field, uint8_t d) {
  if (!dtype_is_half(d)) return ok();
  return k.field_error(field, std::string(dtype_name(d)) +
                                  " is not computed on the vector engine (only activation copy "
                                  "and transpose move fp16/bf16 elements; convert with a DMA)");
}

Expected<void> check_shape(const PayloadChecker& k, const char* field, const uint32_t (&s)[4]) {
  for (int i = 0; i < 4; ++i) {
    NPU_TRY(k.positive(std::string(field) + "[" + std::to_string(i) + "]", s[i]));
  }
  return ok();
}

}  // namespace

Expected<void> check_eltwise(const PayloadChecker& k, const npu_cmd_eltwise& c) {
  NPU_TRY(k.zero_field("reserved0", c.reserved0));
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(k.in_range("op", c.op, NPU_ELTWISE_ADD, NPU_ELTWISE_PRELU));
  NPU_TRY(no_half(k, "dtype", c.dtype));
  if (c.op == NPU_ELTWISE_POW || c.op == NPU_ELTWISE_PRELU) {
    NPU_TRY(k.dtype_in("dtype", c.dtype, {NPU_DTYPE_FP32}, "fp32 (pow and prelu are fp32 only)"));
  } else {
    NPU_TRY(k.dtype_in("dtype", c.dtype, {NPU_DTYPE_FP32, NPU_DTYPE_INT32, NPU_DTYPE_INT8},
                       "fp32, int32 or int8"));
  }
  return check_shape(k, "shape", c.shape);
}

Expected<void> check_activation(const PayloadChecker& k, const npu_cmd_activation& c) {
  NPU_TRY(k.zero_field("reserved0", c.reserved0));
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(k.in_range("func", c.func, NPU_ACT_COPY, NPU_ACT_MAX));
  switch (c.func) {
    case NPU_ACT_COPY:
      NPU_TRY(k.dtype_in("dtype", c.dtype,
                         {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT32, NPU_DTYPE_FP32,
                          NPU_DTYPE_FP16, NPU_DTYPE_BF16},
                         "int8, uint8, int32, fp32, fp16 or bf16"));
      break;
    case NPU_ACT_RELU:
    case NPU_ACT_CLIP:
    case NPU_ACT_ABS:
    case NPU_ACT_NEG:
      NPU_TRY(no_half(k, "dtype", c.dtype));
      NPU_TRY(k.dtype_in("dtype", c.dtype, {NPU_DTYPE_FP32, NPU_DTYPE_INT8, NPU_DTYPE_INT32},
                         "fp32, int8 or int32"));
      break;
    default:
      NPU_TRY(no_half(k, "dtype", c.dtype));
      NPU_TRY(k.dtype_in("dtype", c.dtype, {NPU_DTYPE_FP32}, "fp32"));
  }
  return check_shape(k, "shape", c.shape);
}

Expected<void> check_pool(const PayloadChecker& k, const npu_cmd_pool& c) {
  NPU_TRY(k.zero_field("reserved0", c.reserved0));
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(k.in_range("kind", c.kind, NPU_POOL_MAX, NPU_POOL_AVG));
  if ((c.hdr.flags & NPU_POOL_FLAG_COUNT_PAD) && c.kind != NPU_POOL_AVG) {
    return k.field_error("flags", "count_pad is only defined for avg pooling");
  }
  NPU_TRY(no_half(k, "dtype", c.dtype));
  NPU_TRY(k.dtype_in("dtype", c.dtype, {NPU_DTYPE_FP32, NPU_DTYPE_INT8, NPU_DTYPE_UINT8},
                     "fp32, int8 or uint8"));
  NPU_TRY(all_positive(k, {{"in_h", c.in_h},
                           {"in_w", c.in_w},
                           {"channels", c.channels},
                           {"k_h", c.k_h},
                           {"k_w", c.k_w},
                           {"stride_h", c.stride_h},
                           {"stride_w", c.stride_w}}));
  const struct {
    const char* name;
    uint32_t pad, k;
  } pads[] = {{"pad_top", c.pad_top, c.k_h},
              {"pad_bottom", c.pad_bottom, c.k_h},
              {"pad_left", c.pad_left, c.k_w},
              {"pad_right", c.pad_right, c.k_w}};
  for (const auto& p : pads) {
    if (p.pad >= p.k) {
      return k.field_error(p.name, "padding " + std::to_string(p.pad) +
                                       " must be smaller than the window " + std::to_string(p.k));
    }
  }
  NPU_TRY(k.window("out_h", "k_h", c.in_h, c.pad_top, c.pad_bottom, c.k_h, 1, c.stride_h, c.out_h));
  return k.window("out_w", "k_w", c.in_w, c.pad_left, c.pad_right, c.k_w, 1, c.stride_w, c.out_w);
}

Expected<void> check_softmax(const PayloadChecker& k, const npu_cmd_softmax& c) {
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  return all_positive(k, {{"rows", c.rows}, {"len", c.len}});
}

Expected<void> check_scale_shift(const PayloadChecker& k, const npu_cmd_scale_shift& c) {
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  return all_positive(k, {{"outer", c.outer}, {"channels", c.channels}});
}

Expected<void> check_quant(const PayloadChecker& k, const npu_cmd_quant& c) {
  NPU_TRY(k.zero_field("reserved0", c.reserved0));
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(no_half(k, "in_dtype", c.in_dtype));
  NPU_TRY(no_half(k, "out_dtype", c.out_dtype));
  uint8_t int_dt;
  if (c.hdr.opcode == NPU_OP_QUANTIZE) {
    NPU_TRY(k.dtype_in("in_dtype", c.in_dtype, {NPU_DTYPE_FP32}, "fp32"));
    NPU_TRY(
        k.dtype_in("out_dtype", c.out_dtype, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8}, "int8 or uint8"));
    int_dt = c.out_dtype;
  } else {
    NPU_TRY(k.dtype_in("in_dtype", c.in_dtype, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT32},
                       "int8, uint8 or int32"));
    NPU_TRY(k.dtype_in("out_dtype", c.out_dtype, {NPU_DTYPE_FP32}, "fp32"));
    int_dt = c.in_dtype;
  }
  NPU_TRY(all_positive(k, {{"count", c.count}, {"channels", c.channels}, {"inner", c.inner}}));
  if (c.channels == 1) {
    if (!std::isfinite(c.scale) || c.scale <= 0.0f) {
      return k.field_error("scale", "must be finite and > 0, got " + std::to_string(c.scale));
    }
    NPU_TRY(k.in_range("zp", c.zp, dtype_min(int_dt), dtype_max(int_dt)));
  }
  return ok();
}

Expected<void> check_requant(const PayloadChecker& k, const npu_cmd_requant& c) {
  NPU_TRY(k.zero_field("reserved0", c.reserved0));
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(no_half(k, "in_dtype", c.in_dtype));
  NPU_TRY(no_half(k, "out_dtype", c.out_dtype));
  NPU_TRY(k.dtype_in("in_dtype", c.in_dtype, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT32},
                     "int8, uint8 or int32"));
  NPU_TRY(k.dtype_in("out_dtype", c.out_dtype, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8}, "int8 or uint8"));
  NPU_TRY(k.positive("count", c.count));
  NPU_TRY(k.in_range("multiplier", c.multiplier, 0, std::numeric_limits<int32_t>::max()));
  NPU_TRY(k.in_range("shift", c.shift, 0, 62));
  const int64_t in_lo = dtype_min(c.in_dtype), in_hi = dtype_max(c.in_dtype);
  const int64_t out_lo = dtype_min(c.out_dtype), out_hi = dtype_max(c.out_dtype);
  NPU_TRY(k.in_range("in_zp", c.in_zp, in_lo, in_hi));
  NPU_TRY(k.in_range("out_zp", c.out_zp, out_lo, out_hi));
  NPU_TRY(k.in_range("clamp_min", c.clamp_min, out_lo, out_hi));
  NPU_TRY(k.in_range("clamp_max", c.clamp_max, out_lo, out_hi));
  return k.ordered_clamps(c.clamp_min, c.clamp_max);
}

Expected<void> check_transpose(const PayloadChecker& k, const npu_cmd_transpose& c) {
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(check_shape(k, "in_shape", c.in_shape));
  unsigned seen = 0;
  for (int i = 0; i < 4; ++i) {
    if (c.perm[i] > 3 || (seen & (1u << c.perm[i]))) {
      return k.field_error("perm", "not a permutation of 0..3 (" + std::to_string(c.perm[0]) +
                                       ", " + std::to_string(c.perm[1]) + ", " +
                                       std::to_string(c.perm[2]) + ", " +
                                       std::to_string(c.perm[3]) + ")");
    }
    seen |= 1u << c.perm[i];
  }
  return k.elem_size(c.elem_size);
}

Expected<void> check_reduce(const PayloadChecker& k, const npu_cmd_reduce& c) {
  NPU_TRY(k.zero("reserved0", c.reserved0, sizeof c.reserved0));
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(k.in_range("kind", c.kind, NPU_REDUCE_SUM, NPU_REDUCE_MIN));
  return all_positive(k, {{"outer", c.outer}, {"len", c.len}, {"inner", c.inner}});
}

Expected<void> check_moments(const PayloadChecker& k, const npu_cmd_moments& c) {
  NPU_TRY(k.zero("reserved", c.reserved, sizeof c.reserved));
  NPU_TRY(all_positive(k, {{"outer", c.outer}, {"len", c.len}, {"inner", c.inner}}));
  // Both outputs are [outer][inner] fp32; one written over the other would lose a result.
  const uint64_t bytes = uint64_t{c.outer} * c.inner * 4;
  const uint64_t lo = std::min(c.mean_addr, c.sq_addr), hi = std::max(c.mean_addr, c.sq_addr);
  if (lo + bytes > hi) {
    return k.field_error("sq_addr", "the mean output [" + std::to_string(c.mean_addr) + ", +" +
                                        std::to_string(bytes) + ") and the sq output [" +
                                        std::to_string(c.sq_addr) + ", +" + std::to_string(bytes) +
                                        ") overlap");
  }
  return ok();
}

// ---------------------------------------------------------------------------------------------
// Dispatch (generated)

Expected<void> check_payload(const PayloadChecker& k, const npu_cmd& cmd) {
  switch (cmd.hdr.opcode) {
#define NPU_CONTROL(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, ...) \
  case NPU_OP_##ID:                                                           \
    return CHECK(k, cmd.PAYLOAD);
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, ...) \
  case NPU_OP_##ID:                                                        \
    return CHECK(k, cmd.PAYLOAD);
#include "npu/isa/opcodes.def"
    default:
      return k.field_error("opcode", "unknown opcode " + hex(cmd.hdr.opcode));
  }
}

}  // namespace npu::isa::detail

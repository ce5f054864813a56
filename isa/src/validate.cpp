// validate(): the one command-buffer checker (docs/isa.md, "Validity rules").
#include "npu/isa/validate.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "common.h"
#include "npu_accel.h"

namespace npu::isa {
namespace {

using detail::dtype_name;
using detail::dtype_size;

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string feature_names(uint64_t bits) {
  std::string s;
  auto add = [&](const char* n) { s += s.empty() ? n : std::string(", ") + n; };
  if (bits & NPU_FEATURE_INT8) add("int8");
  if (bits & NPU_FEATURE_FP32) add("fp32");
  if (bits & NPU_FEATURE_TRANSCENDENTAL) add("transcendental");
  if (bits & ~uint64_t{NPU_FEATURES_ALL}) add(hex(bits & ~uint64_t{NPU_FEATURES_ALL}).c_str());
  return s.empty() ? "none" : s;
}

bool engine_allowed(uint8_t op, uint8_t engine) {
  switch (op) {
    case NPU_OP_END:
    case NPU_OP_FENCE:
      return engine == NPU_ENGINE_CP;
    case NPU_OP_MARKER:
    case NPU_OP_NOP:
      return engine < NPU_NUM_ENGINES;
    case NPU_OP_SEM_SIGNAL:
    case NPU_OP_SEM_WAIT:
      return engine != NPU_ENGINE_CP && engine < NPU_NUM_ENGINES;
    case NPU_OP_DMA_LOAD:
      return engine == NPU_ENGINE_DMA_IN;
    case NPU_OP_DMA_STORE:
      return engine == NPU_ENGINE_DMA_OUT;
    case NPU_OP_CONV2D:
    case NPU_OP_MATMUL:
      return engine == NPU_ENGINE_MATRIX;
    default:
      return engine == NPU_ENGINE_VECTOR;
  }
}

const char* allowed_engines(uint8_t op) {
  switch (op) {
    case NPU_OP_END:
    case NPU_OP_FENCE:
      return "cp";
    case NPU_OP_MARKER:
    case NPU_OP_NOP:
      return "any engine";
    case NPU_OP_SEM_SIGNAL:
    case NPU_OP_SEM_WAIT:
      return "dma_in, dma_out, matrix or vector";
    case NPU_OP_DMA_LOAD:
      return "dma_in";
    case NPU_OP_DMA_STORE:
      return "dma_out";
    case NPU_OP_CONV2D:
    case NPU_OP_MATMUL:
      return "matrix";
    default:
      return "vector";
  }
}

uint16_t allowed_flags(uint8_t op) {
  switch (op) {
    case NPU_OP_FENCE:
      return NPU_FENCE_FLAG_IRQ;
    case NPU_OP_CONV2D:
      return NPU_MM_FLAG_BIAS;
    case NPU_OP_MATMUL:
      return NPU_MM_FLAG_BIAS | NPU_MM_FLAG_TRANSPOSE_B;
    case NPU_OP_POOL:
      return NPU_POOL_FLAG_COUNT_PAD;
    case NPU_OP_SOFTMAX:
      return NPU_SOFTMAX_FLAG_LOG;
    default:
      return 0;
  }
}

bool is_known_opcode(uint8_t op) {
  return (op >= NPU_OP_END && op <= NPU_OP_SEM_WAIT) || op == NPU_OP_DMA_LOAD ||
         op == NPU_OP_DMA_STORE || op == NPU_OP_CONV2D || op == NPU_OP_MATMUL ||
         (op >= NPU_OP_ELTWISE && op <= NPU_OP_REDUCE);
}

bool is_8bit(uint8_t d) {
  return d == NPU_DTYPE_INT8 || d == NPU_DTYPE_UINT8;
}

/// Checks one command; every error is prefixed "command i (op): ".
class CommandChecker {
 public:
  CommandChecker(uint32_t index, const npu_cmd& cmd, const DeviceConfig& cfg)
      : index_(index), c_(cmd), cfg_(cfg) {}

  Error error(const std::string& what) const {
    return make_error(EINVAL, "command " + std::to_string(index_) + " (" +
                                  opcode_name(c_.hdr.opcode) + "): " + what);
  }
  Error field_error(const std::string& field, const std::string& what) const {
    return error("field " + field + ": " + what);
  }

  Expected<void> check() {
    const auto& h = c_.hdr;
    if (!is_known_opcode(h.opcode)) {
      return field_error("opcode", "unknown opcode " + hex(h.opcode));
    }
    if (!engine_allowed(h.opcode, h.engine)) {
      return field_error("engine", std::string("expected ") + allowed_engines(h.opcode) + ", got " +
                                       engine_label(h.engine));
    }
    if (h.reserved != 0) return field_error("hdr.reserved", "must be zero, got " + hex(h.reserved));
    if (h.flags & ~allowed_flags(h.opcode)) {
      return field_error("flags", "undefined flag bits " + hex(h.flags & ~allowed_flags(h.opcode)));
    }
    NPU_TRY(check_payload());
    const uint64_t need = command_features(c_);
    if (need & ~cfg_.features) {
      return error("requires feature " + feature_names(need & ~cfg_.features) +
                   ", which the device does not implement");
    }
    return ok();
  }

 private:
  static std::string engine_label(uint8_t e) {
    const char* n = engine_name(e);
    return std::strcmp(n, "unknown") == 0 ? "engine " + std::to_string(e) : n;
  }

  Expected<void> zero(const char* field, const void* p, size_t n) const {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) {
      if (b[i] != 0) {
        return field_error(std::string(field) + (n > 1 ? "[" + std::to_string(i) + "]" : ""),
                           "must be zero, got " + hex(b[i]));
      }
    }
    return ok();
  }
  template <typename T>
  Expected<void> zero_field(const char* field, const T& v) const {
    if (v != 0) return field_error(field, "must be zero, got " + hex(static_cast<uint64_t>(v)));
    return ok();
  }
  Expected<void> positive(const std::string& field, uint64_t v) const {
    if (v == 0) return field_error(field, "must be >= 1, got 0");
    return ok();
  }
  Expected<void> in_range(const std::string& field, int64_t v, int64_t lo, int64_t hi) const {
    if (v < lo || v > hi) {
      return field_error(field, "expected " + std::to_string(lo) + ".." + std::to_string(hi) +
                                    ", got " + std::to_string(v));
    }
    return ok();
  }
  Expected<void> dtype_in(const char* field, uint8_t d, std::initializer_list<uint8_t> ok_set,
                          const char* expected) const {
    for (uint8_t x : ok_set) {
      if (d == x) return ok();
    }
    return field_error(field, std::string("expected ") + expected + ", got " + dtype_label(d));
  }
  static std::string dtype_label(uint8_t d) {
    return dtype_size(d) ? dtype_name(d) : "dtype " + std::to_string(d);
  }
  Expected<void> equal(const char* field, uint64_t expected, uint64_t got) const {
    if (expected != got) {
      return field_error(field,
                         "expected " + std::to_string(expected) + ", got " + std::to_string(got));
    }
    return ok();
  }

  Expected<void> check_payload() {
    switch (c_.hdr.opcode) {
      case NPU_OP_END:
      case NPU_OP_NOP:
        return zero("reserved", c_.end.reserved, sizeof c_.end.reserved);
      case NPU_OP_FENCE:
        return zero("reserved", c_.fence.reserved, sizeof c_.fence.reserved);
      case NPU_OP_MARKER:
        return zero("reserved", c_.marker.reserved, sizeof c_.marker.reserved);
      case NPU_OP_SEM_SIGNAL:
      case NPU_OP_SEM_WAIT:
        return check_sem();
      case NPU_OP_DMA_LOAD:
      case NPU_OP_DMA_STORE:
        return check_dma();
      case NPU_OP_CONV2D:
        return check_conv();
      case NPU_OP_MATMUL:
        return check_matmul();
      case NPU_OP_ELTWISE:
        return check_eltwise();
      case NPU_OP_ACTIVATION:
        return check_activation();
      case NPU_OP_POOL:
        return check_pool();
      case NPU_OP_SOFTMAX: {
        const auto& c = c_.softmax;
        NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
        NPU_TRY(positive("rows", c.rows));
        return positive("len", c.len);
      }
      case NPU_OP_SCALE_SHIFT: {
        const auto& c = c_.scale_shift;
        NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
        NPU_TRY(positive("outer", c.outer));
        return positive("channels", c.channels);
      }
      case NPU_OP_QUANTIZE:
      case NPU_OP_DEQUANTIZE:
        return check_quant();
      case NPU_OP_REQUANTIZE:
        return check_requant();
      case NPU_OP_TRANSPOSE:
        return check_transpose();
      case NPU_OP_REDUCE: {
        const auto& c = c_.reduce;
        NPU_TRY(zero("reserved0", c.reserved0, sizeof c.reserved0));
        NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
        NPU_TRY(in_range("kind", c.kind, NPU_REDUCE_SUM, NPU_REDUCE_MIN));
        NPU_TRY(positive("outer", c.outer));
        NPU_TRY(positive("len", c.len));
        return positive("inner", c.inner);
      }
      default:
        return field_error("opcode", "unknown opcode " + hex(c_.hdr.opcode));
    }
  }

  Expected<void> check_sem() {
    const auto& c = c_.sem;
    NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
    if (c.sem >= cfg_.num_semaphores) {
      return field_error("sem", "semaphore " + std::to_string(c.sem) +
                                    " out of range (device has " +
                                    std::to_string(cfg_.num_semaphores) + ")");
    }
    return in_range("count", c.count, 1, cfg_.semaphore_max);
  }

  Expected<void> check_dma() {
    const auto& c = c_.dma;
    NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
    if (c.elem_size != 1 && c.elem_size != 2 && c.elem_size != 4) {
      return field_error("elem_size", "expected 1, 2 or 4, got " + std::to_string(c.elem_size));
    }
    for (int i = 0; i < 3; ++i) NPU_TRY(positive("size[" + std::to_string(i) + "]", c.size[i]));
    if (c_.hdr.opcode == NPU_OP_DMA_STORE) {
      for (int i = 0; i < 3; ++i) {
        if (c.pad_before[i] != 0 || c.pad_after[i] != 0) {
          return field_error(
              std::string(c.pad_before[i] ? "pad_before[" : "pad_after[") + std::to_string(i) + "]",
              "dma_store must have zero padding");
        }
      }
      NPU_TRY(zero_field("pad_value", c.pad_value));
    }
    return ok();
  }

  // Shared by CONV2D and MATMUL: datapath dtypes, zero points and clamps.
  struct MmFields {
    const char *in, *w, *in_zp;
  };
  Expected<void> check_mm_quant(uint8_t in_dt, uint8_t w_dt, uint8_t out_dt, MmFields names,
                                int32_t in_zp, int32_t out_zp, int32_t cmin, int32_t cmax,
                                float fmin, float fmax) {
    if (in_dt == NPU_DTYPE_FP32) {
      NPU_TRY(dtype_in(names.w, w_dt, {NPU_DTYPE_FP32}, "fp32 (fp32 mode)"));
      NPU_TRY(dtype_in("out_dtype", out_dt, {NPU_DTYPE_FP32}, "fp32 (fp32 mode)"));
      if (std::isnan(fmin)) return field_error("fclamp_min", "must not be nan");
      if (std::isnan(fmax)) return field_error("fclamp_max", "must not be nan");
      if (fmin > fmax) {
        return field_error("fclamp_min", "greater than fclamp_max (" + std::to_string(fmin) +
                                             " > " + std::to_string(fmax) + ")");
      }
      return ok();
    }
    NPU_TRY(dtype_in(names.in, in_dt, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8}, "int8, uint8 or fp32"));
    NPU_TRY(dtype_in(names.w, w_dt, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8}, "int8 or uint8"));
    NPU_TRY(dtype_in("out_dtype", out_dt, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT32},
                     "int8, uint8 or int32"));
    if (c_.hdr.flags & NPU_MM_FLAG_BIAS) {
      return field_error("flags", "bias flag is fp32 only (integer bias is in the channel params)");
    }
    NPU_TRY(in_range(names.in_zp, in_zp, dtype_min(in_dt), dtype_max(in_dt)));
    if (is_8bit(out_dt)) {
      NPU_TRY(in_range("out_zp", out_zp, dtype_min(out_dt), dtype_max(out_dt)));
      NPU_TRY(in_range("clamp_min", cmin, dtype_min(out_dt), dtype_max(out_dt)));
      NPU_TRY(in_range("clamp_max", cmax, dtype_min(out_dt), dtype_max(out_dt)));
    }
    if (cmin > cmax) {
      return field_error("clamp_min", "greater than clamp_max (" + std::to_string(cmin) + " > " +
                                          std::to_string(cmax) + ")");
    }
    return ok();
  }

  Expected<void> check_conv() {
    const auto& c = c_.conv2d;
    NPU_TRY(zero_field("reserved0", c.reserved0));
    NPU_TRY(zero_field("reserved1", c.reserved1));
    NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
    NPU_TRY(check_mm_quant(c.in_dtype, c.w_dtype, c.out_dtype, {"in_dtype", "w_dtype", "in_zp"},
                           c.in_zp, c.out_zp, c.clamp_min, c.clamp_max, c.fclamp_min,
                           c.fclamp_max));
    NPU_TRY(positive("in_h", c.in_h));
    NPU_TRY(positive("in_w", c.in_w));
    NPU_TRY(positive("in_c", c.in_c));
    NPU_TRY(positive("out_c", c.out_c));
    NPU_TRY(positive("k_h", c.k_h));
    NPU_TRY(positive("k_w", c.k_w));
    NPU_TRY(positive("groups", c.groups));
    NPU_TRY(positive("stride_h", c.stride_h));
    NPU_TRY(positive("stride_w", c.stride_w));
    NPU_TRY(positive("dil_h", c.dil_h));
    NPU_TRY(positive("dil_w", c.dil_w));
    if (c.in_c % c.groups != 0) {
      return field_error(
          "groups", std::to_string(c.groups) + " does not divide in_c " + std::to_string(c.in_c));
    }
    if (c.out_c % c.groups != 0) {
      return field_error(
          "groups", std::to_string(c.groups) + " does not divide out_c " + std::to_string(c.out_c));
    }
    NPU_TRY(check_window("out_h", "k_h", c.in_h, c.pad_top, c.pad_bottom, c.k_h, c.dil_h,
                         c.stride_h, c.out_h));
    return check_window("out_w", "k_w", c.in_w, c.pad_left, c.pad_right, c.k_w, c.dil_w, c.stride_w,
                        c.out_w);
  }

  /// out == (in + pad0 + pad1 - dil*(k-1) - 1) / stride + 1, with the window fitting.
  Expected<void> check_window(const char* out_field, const char* k_field, uint64_t in,
                              uint64_t pad0, uint64_t pad1, uint64_t k, uint64_t dil,
                              uint64_t stride, uint64_t out) {
    const uint64_t padded = in + pad0 + pad1;
    const uint64_t extent = dil * (k - 1) + 1;
    if (extent > padded) {
      return field_error(k_field, "window of " + std::to_string(extent) +
                                      " larger than the padded input of " + std::to_string(padded));
    }
    return equal(out_field, (padded - extent) / stride + 1, out);
  }

  Expected<void> check_matmul() {
    const auto& c = c_.matmul;
    NPU_TRY(zero_field("reserved0", c.reserved0));
    NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
    NPU_TRY(check_mm_quant(c.a_dtype, c.b_dtype, c.out_dtype, {"a_dtype", "b_dtype", "a_zp"},
                           c.a_zp, c.out_zp, c.clamp_min, c.clamp_max, c.fclamp_min, c.fclamp_max));
    NPU_TRY(positive("m", c.m));
    NPU_TRY(positive("k", c.k));
    NPU_TRY(positive("n", c.n));
    return positive("batch", c.batch);
  }

  Expected<void> check_shape(const uint32_t (&shape)[4]) {
    for (int i = 0; i < 4; ++i) NPU_TRY(positive("shape[" + std::to_string(i) + "]", shape[i]));
    return ok();
  }

  Expected<void> check_eltwise() {
    const auto& c = c_.eltwise;
    NPU_TRY(zero_field("reserved0", c.reserved0));
    NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
    NPU_TRY(in_range("op", c.op, NPU_ELTWISE_ADD, NPU_ELTWISE_PRELU));
    if (c.op == NPU_ELTWISE_POW || c.op == NPU_ELTWISE_PRELU) {
      NPU_TRY(dtype_in("dtype", c.dtype, {NPU_DTYPE_FP32}, "fp32 (pow and prelu are fp32 only)"));
    } else {
      NPU_TRY(dtype_in("dtype", c.dtype, {NPU_DTYPE_FP32, NPU_DTYPE_INT32, NPU_DTYPE_INT8},
                       "fp32, int32 or int8"));
    }
    return check_shape(c.shape);
  }

  Expected<void> check_activation() {
    const auto& c = c_.activation;
    NPU_TRY(zero_field("reserved0", c.reserved0));
    NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
    NPU_TRY(in_range("func", c.func, NPU_ACT_COPY, NPU_ACT_MAX));
    switch (c.func) {
      case NPU_ACT_COPY:
        NPU_TRY(dtype_in("dtype", c.dtype,
                         {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT32, NPU_DTYPE_FP32},
                         "int8, uint8, int32 or fp32"));
        break;
      case NPU_ACT_RELU:
      case NPU_ACT_CLIP:
      case NPU_ACT_ABS:
      case NPU_ACT_NEG:
        NPU_TRY(dtype_in("dtype", c.dtype, {NPU_DTYPE_FP32, NPU_DTYPE_INT8, NPU_DTYPE_INT32},
                         "fp32, int8 or int32"));
        break;
      default:
        NPU_TRY(dtype_in("dtype", c.dtype, {NPU_DTYPE_FP32}, "fp32"));
    }
    return check_shape(c.shape);
  }

  Expected<void> check_pool() {
    const auto& c = c_.pool;
    NPU_TRY(zero_field("reserved0", c.reserved0));
    NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
    NPU_TRY(in_range("kind", c.kind, NPU_POOL_MAX, NPU_POOL_AVG));
    if ((c_.hdr.flags & NPU_POOL_FLAG_COUNT_PAD) && c.kind != NPU_POOL_AVG) {
      return field_error("flags", "count_pad is only defined for avg pooling");
    }
    NPU_TRY(dtype_in("dtype", c.dtype, {NPU_DTYPE_FP32, NPU_DTYPE_INT8, NPU_DTYPE_UINT8},
                     "fp32, int8 or uint8"));
    NPU_TRY(positive("in_h", c.in_h));
    NPU_TRY(positive("in_w", c.in_w));
    NPU_TRY(positive("channels", c.channels));
    NPU_TRY(positive("k_h", c.k_h));
    NPU_TRY(positive("k_w", c.k_w));
    NPU_TRY(positive("stride_h", c.stride_h));
    NPU_TRY(positive("stride_w", c.stride_w));
    const struct {
      const char* name;
      uint32_t pad, k;
    } pads[] = {{"pad_top", c.pad_top, c.k_h},
                {"pad_bottom", c.pad_bottom, c.k_h},
                {"pad_left", c.pad_left, c.k_w},
                {"pad_right", c.pad_right, c.k_w}};
    for (const auto& p : pads) {
      if (p.pad >= p.k) {
        return field_error(p.name, "padding " + std::to_string(p.pad) +
                                       " must be smaller than the window " + std::to_string(p.k));
      }
    }
    NPU_TRY(check_window("out_h", "k_h", c.in_h, c.pad_top, c.pad_bottom, c.k_h, 1, c.stride_h,
                         c.out_h));
    return check_window("out_w", "k_w", c.in_w, c.pad_left, c.pad_right, c.k_w, 1, c.stride_w,
                        c.out_w);
  }

  Expected<void> check_quant() {
    const auto& c = c_.quant;
    NPU_TRY(zero_field("reserved0", c.reserved0));
    NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
    uint8_t int_dt;
    if (c_.hdr.opcode == NPU_OP_QUANTIZE) {
      NPU_TRY(dtype_in("in_dtype", c.in_dtype, {NPU_DTYPE_FP32}, "fp32"));
      NPU_TRY(
          dtype_in("out_dtype", c.out_dtype, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8}, "int8 or uint8"));
      int_dt = c.out_dtype;
    } else {
      NPU_TRY(dtype_in("in_dtype", c.in_dtype, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT32},
                       "int8, uint8 or int32"));
      NPU_TRY(dtype_in("out_dtype", c.out_dtype, {NPU_DTYPE_FP32}, "fp32"));
      int_dt = c.in_dtype;
    }
    NPU_TRY(positive("count", c.count));
    NPU_TRY(positive("channels", c.channels));
    NPU_TRY(positive("inner", c.inner));
    if (c.channels == 1) {
      if (!std::isfinite(c.scale) || c.scale <= 0.0f) {
        return field_error("scale", "must be finite and > 0, got " + std::to_string(c.scale));
      }
      NPU_TRY(in_range("zp", c.zp, dtype_min(int_dt), dtype_max(int_dt)));
    }
    return ok();
  }

  Expected<void> check_requant() {
    const auto& c = c_.requant;
    NPU_TRY(zero_field("reserved0", c.reserved0));
    NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
    NPU_TRY(dtype_in("in_dtype", c.in_dtype, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8, NPU_DTYPE_INT32},
                     "int8, uint8 or int32"));
    NPU_TRY(dtype_in("out_dtype", c.out_dtype, {NPU_DTYPE_INT8, NPU_DTYPE_UINT8}, "int8 or uint8"));
    NPU_TRY(positive("count", c.count));
    NPU_TRY(in_range("multiplier", c.multiplier, 0, std::numeric_limits<int32_t>::max()));
    NPU_TRY(in_range("shift", c.shift, 0, 62));
    NPU_TRY(in_range("in_zp", c.in_zp, dtype_min(c.in_dtype), dtype_max(c.in_dtype)));
    NPU_TRY(in_range("out_zp", c.out_zp, dtype_min(c.out_dtype), dtype_max(c.out_dtype)));
    NPU_TRY(in_range("clamp_min", c.clamp_min, dtype_min(c.out_dtype), dtype_max(c.out_dtype)));
    NPU_TRY(in_range("clamp_max", c.clamp_max, dtype_min(c.out_dtype), dtype_max(c.out_dtype)));
    if (c.clamp_min > c.clamp_max) {
      return field_error("clamp_min", "greater than clamp_max (" + std::to_string(c.clamp_min) +
                                          " > " + std::to_string(c.clamp_max) + ")");
    }
    return ok();
  }

  Expected<void> check_transpose() {
    const auto& c = c_.transpose;
    NPU_TRY(zero("reserved", c.reserved, sizeof c.reserved));
    for (int i = 0; i < 4; ++i) {
      NPU_TRY(positive("in_shape[" + std::to_string(i) + "]", c.in_shape[i]));
    }
    unsigned seen = 0;
    for (int i = 0; i < 4; ++i) {
      if (c.perm[i] > 3 || (seen & (1u << c.perm[i]))) {
        return field_error("perm", "not a permutation of 0..3 (" + std::to_string(c.perm[0]) +
                                       ", " + std::to_string(c.perm[1]) + ", " +
                                       std::to_string(c.perm[2]) + ", " +
                                       std::to_string(c.perm[3]) + ")");
      }
      seen |= 1u << c.perm[i];
    }
    if (c.elem_size != 1 && c.elem_size != 2 && c.elem_size != 4) {
      return field_error("elem_size", "expected 1, 2 or 4, got " + std::to_string(c.elem_size));
    }
    return ok();
  }

  uint32_t index_;
  const npu_cmd& c_;
  const DeviceConfig& cfg_;
};

struct SemUse {
  int32_t signal_cmd = -1;
  uint8_t signal_engine = 0;
  int32_t wait_cmd = -1;
  uint8_t wait_engine = 0;
};

/// Computes the command's regions into `regions` and checks its SRAM ranges.
Expected<void> check_regions(const CommandChecker& checker, const npu_cmd& cmd,
                             const DeviceConfig& cfg, std::vector<Region>& regions) {
  regions.clear();
  if (auto r = command_regions(cmd, regions); !r) return checker.error(r.error().message);
  for (const Region& reg : regions) {
    if (reg.space == Space::Sram && reg.end > cfg.sram_size) {
      return checker.field_error(reg.field, "sram range [" + std::to_string(reg.begin) + ", " +
                                                std::to_string(reg.end) + ") outside " +
                                                std::to_string(cfg.sram_size) + "-byte sram");
    }
  }
  return ok();
}

}  // namespace

Expected<void> check_command(const npu_cmd& cmd, uint32_t index, const DeviceConfig& cfg) {
  CommandChecker checker(index, cmd, cfg);
  NPU_TRY(checker.check());
  std::vector<Region> regions;
  if (auto r = command_regions(cmd, regions); !r) return checker.error(r.error().message);
  return ok();
}

uint64_t command_features(const npu_cmd& cmd) {
  switch (cmd.hdr.opcode) {
    case NPU_OP_CONV2D:
      return cmd.conv2d.in_dtype == NPU_DTYPE_FP32 ? NPU_FEATURE_FP32 : NPU_FEATURE_INT8;
    case NPU_OP_MATMUL:
      return cmd.matmul.a_dtype == NPU_DTYPE_FP32 ? NPU_FEATURE_FP32 : NPU_FEATURE_INT8;
    case NPU_OP_ELTWISE: {
      uint64_t f = cmd.eltwise.dtype == NPU_DTYPE_FP32 ? NPU_FEATURE_FP32 : 0;
      if (cmd.eltwise.op == NPU_ELTWISE_POW) f |= NPU_FEATURE_TRANSCENDENTAL;
      return f;
    }
    case NPU_OP_ACTIVATION: {
      const auto& c = cmd.activation;
      uint64_t f = (c.dtype == NPU_DTYPE_FP32 && c.func != NPU_ACT_COPY) ? NPU_FEATURE_FP32 : 0;
      if (detail::act_needs_transcendental(c.func)) f |= NPU_FEATURE_TRANSCENDENTAL;
      return f;
    }
    case NPU_OP_POOL:
      return cmd.pool.dtype == NPU_DTYPE_FP32 ? NPU_FEATURE_FP32 : 0;
    case NPU_OP_SOFTMAX:
      return NPU_FEATURE_FP32 | NPU_FEATURE_TRANSCENDENTAL;
    case NPU_OP_SCALE_SHIFT:
    case NPU_OP_QUANTIZE:
    case NPU_OP_DEQUANTIZE:
    case NPU_OP_REDUCE:
      return NPU_FEATURE_FP32;
    default:
      return 0;
  }
}

uint64_t program_features(std::span<const npu_cmd> cmds) {
  uint64_t f = 0;
  for (const npu_cmd& c : cmds) f |= command_features(c);
  return f;
}

Expected<Program> validate(std::span<const std::byte> buffer, const DeviceConfig& cfg) {
  auto buf_error = [](const std::string& what) {
    return make_error(EINVAL, "command buffer: " + what);
  };
  constexpr size_t kHeader = sizeof(npu_cmdbuf_header);
  if (buffer.size() < kHeader) {
    return buf_error("size " + std::to_string(buffer.size()) + " smaller than the " +
                     std::to_string(kHeader) + "-byte header");
  }
  npu_cmdbuf_header h;
  std::memcpy(&h, buffer.data(), kHeader);
  if (h.magic != NPU_ISA_MAGIC) {
    return buf_error("field magic: expected " + hex(NPU_ISA_MAGIC) + ", got " + hex(h.magic));
  }
  if (h.version_major != NPU_ISA_VERSION_MAJOR) {
    return buf_error("field version_major: expected " + std::to_string(NPU_ISA_VERSION_MAJOR) +
                     ", got " + std::to_string(h.version_major));
  }
  if (h.version_minor > NPU_ISA_VERSION_MINOR) {
    return buf_error("field version_minor: " + std::to_string(h.version_minor) +
                     " newer than the device's " + std::to_string(NPU_ISA_VERSION_MINOR));
  }
  if (h.size != buffer.size()) {
    return buf_error("field size: header says " + std::to_string(h.size) + " bytes, buffer has " +
                     std::to_string(buffer.size()));
  }
  if (h.num_cmds == 0) return buf_error("field num_cmds: must be >= 1 (end is required)");
  const uint64_t expected_size = kHeader + uint64_t{h.num_cmds} * NPU_CMD_SIZE;
  if (expected_size != buffer.size()) {
    return buf_error("field size: expected 32 + num_cmds * 128 = " + std::to_string(expected_size) +
                     ", got " + std::to_string(h.size));
  }
  if (h.reserved != 0) return buf_error("field reserved: must be zero, got " + hex(h.reserved));
  if (h.required_features & ~uint64_t{NPU_FEATURES_ALL}) {
    return buf_error("field required_features: unknown feature bits " +
                     hex(h.required_features & ~uint64_t{NPU_FEATURES_ALL}));
  }
  if (const uint64_t missing = h.required_features & ~cfg.features; missing != 0) {
    return buf_error("field required_features: device lacks feature " + feature_names(missing));
  }

  Program prog;
  prog.required_features = h.required_features;
  prog.cmds.resize(h.num_cmds);
  std::memcpy(prog.cmds.data(), buffer.data() + kHeader, size_t{h.num_cmds} * NPU_CMD_SIZE);

  std::vector<SemUse> sems(cfg.num_semaphores);
  std::vector<Region> regions;
  for (uint32_t i = 0; i < h.num_cmds; ++i) {
    const npu_cmd& cmd = prog.cmds[i];
    CommandChecker checker(i, cmd, cfg);
    NPU_TRY(checker.check());
    const uint8_t op = cmd.hdr.opcode;
    if (op == NPU_OP_END && i + 1 != h.num_cmds) {
      return checker.error("end must be the last command (buffer has " +
                           std::to_string(h.num_cmds) + " commands)");
    }
    if (op == NPU_OP_SEM_SIGNAL || op == NPU_OP_SEM_WAIT) {
      SemUse& u = sems[cmd.sem.sem];
      const bool signal = op == NPU_OP_SEM_SIGNAL;
      int32_t& first = signal ? u.signal_cmd : u.wait_cmd;
      uint8_t& engine = signal ? u.signal_engine : u.wait_engine;
      if (first >= 0 && engine != cmd.hdr.engine) {
        return checker.field_error(
            "sem", "semaphore " + std::to_string(cmd.sem.sem) + " " +
                       (signal ? "signalled" : "waited on") + " by engine " +
                       engine_name(cmd.hdr.engine) + " here and by engine " + engine_name(engine) +
                       " at command " + std::to_string(first) + " (one " +
                       (signal ? "signaller" : "waiter") + " engine per semaphore)");
      }
      if (first < 0) {
        first = static_cast<int32_t>(i);
        engine = cmd.hdr.engine;
      }
    }
    NPU_TRY(check_regions(checker, cmd, cfg, regions));
    for (const Region& reg : regions) {
      if (reg.space == Space::Dram)
        prog.dram.push_back(DramAccess{i, reg.access, reg.begin, reg.end, reg.field});
    }
  }
  if (prog.cmds.back().hdr.opcode != NPU_OP_END) {
    CommandChecker last(h.num_cmds - 1, prog.cmds.back(), cfg);
    return last.error("last command must be end");
  }
  return prog;
}

bool opcode_allows_engine(uint8_t opcode, uint8_t engine) {
  return is_known_opcode(opcode) && engine_allowed(opcode, engine);
}

const char* opcode_name(uint8_t opcode) {
  switch (opcode) {
    case NPU_OP_END:
      return "end";
    case NPU_OP_FENCE:
      return "fence";
    case NPU_OP_MARKER:
      return "marker";
    case NPU_OP_NOP:
      return "nop";
    case NPU_OP_SEM_SIGNAL:
      return "sem_signal";
    case NPU_OP_SEM_WAIT:
      return "sem_wait";
    case NPU_OP_DMA_LOAD:
      return "dma_load";
    case NPU_OP_DMA_STORE:
      return "dma_store";
    case NPU_OP_CONV2D:
      return "conv2d";
    case NPU_OP_MATMUL:
      return "matmul";
    case NPU_OP_ELTWISE:
      return "eltwise";
    case NPU_OP_ACTIVATION:
      return "activation";
    case NPU_OP_POOL:
      return "pool";
    case NPU_OP_SOFTMAX:
      return "softmax";
    case NPU_OP_SCALE_SHIFT:
      return "scale_shift";
    case NPU_OP_QUANTIZE:
      return "quantize";
    case NPU_OP_DEQUANTIZE:
      return "dequantize";
    case NPU_OP_REQUANTIZE:
      return "requantize";
    case NPU_OP_TRANSPOSE:
      return "transpose";
    case NPU_OP_REDUCE:
      return "reduce";
    default:
      return "unknown";
  }
}

const char* fault_kind_name(uint32_t kind) {
  switch (kind) {
    case DRM_NPU_FAULT_NONE:
      return "none";
    case DRM_NPU_FAULT_PARSE:
      return "parse";
    case DRM_NPU_FAULT_MMU:
      return "mmu";
    case DRM_NPU_FAULT_SRAM_RANGE:
      return "sram_range";
    case DRM_NPU_FAULT_SEMAPHORE:
      return "semaphore";
    case DRM_NPU_FAULT_WATCHDOG:
      return "watchdog";
    default:
      return "unknown";
  }
}

const char* engine_name(uint8_t engine) {
  switch (engine) {
    case NPU_ENGINE_CP:
      return "cp";
    case NPU_ENGINE_DMA_IN:
      return "dma_in";
    case NPU_ENGINE_DMA_OUT:
      return "dma_out";
    case NPU_ENGINE_MATRIX:
      return "matrix";
    case NPU_ENGINE_VECTOR:
      return "vector";
    default:
      return "unknown";
  }
}

}  // namespace npu::isa

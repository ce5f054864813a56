// CommandBufferBuilder: typed construction of ISA command buffers (uapi/npu_isa.h). One method
// per command taking a small designated-initializer-friendly argument struct with sensible
// defaults (contiguous strides, stride/dilation 1, clamps at the dtype's range), so tests and
// the compiler never fill npu_cmd bytes by hand.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "npu_isa.h"

namespace npu::isa {

/// DMA_LOAD / DMA_STORE. Box dims (x, y, z), x innermost.
struct DmaArgs {
  uint64_t dram = 0;       // device VA of the box's first element
  uint32_t sram = 0;       // SRAM offset of the (padded) box's first element
  uint32_t elem_size = 1;  // 1, 2 or 4
  std::array<uint32_t, 3> size = {1, 1, 1};
  /// Bytes per x, y, z step in DRAM; default: a contiguous box (elem, x*elem, x*y*elem).
  std::optional<std::array<uint32_t, 3>> dram_stride = std::nullopt;
  /// Bytes per y, z step in SRAM; default: the contiguous padded box.
  std::optional<std::array<uint32_t, 2>> sram_stride = std::nullopt;
  std::array<uint16_t, 3> pad_before = {0, 0, 0};  // DMA_LOAD only
  std::array<uint16_t, 3> pad_after = {0, 0, 0};   // DMA_LOAD only
  uint32_t pad_value = 0;                          // DMA_LOAD only, low elem_size bytes
  /// Conversion (ISA 1.1): both 0 (a plain copy) or both NPU_DTYPE_FP32/FP16/BF16; then
  /// elem_size is sram_dtype's size and the default DRAM strides use dram_dtype's size.
  uint8_t dram_dtype = 0;
  uint8_t sram_dtype = 0;
};

/// CONV2D (fields in ISA order). out_h/out_w 0 = derived from the conv formula; clamps
/// default to the output dtype's range (int) and -inf/+inf (fp32).
struct Conv2dArgs {
  uint32_t in_addr = 0, w_addr = 0, out_addr = 0, chan_addr = 0;
  uint16_t in_h = 1, in_w = 1, in_c = 1;
  uint16_t out_h = 0, out_w = 0, out_c = 1;
  uint16_t k_h = 1, k_w = 1;
  uint16_t groups = 1;
  uint8_t stride_h = 1, stride_w = 1;
  uint8_t dil_h = 1, dil_w = 1;
  uint8_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  uint8_t in_dtype = NPU_DTYPE_INT8, w_dtype = NPU_DTYPE_INT8, out_dtype = NPU_DTYPE_INT8;
  int32_t in_zp = 0, out_zp = 0;
  std::optional<int32_t> clamp_min = std::nullopt, clamp_max = std::nullopt;
  float fclamp_min = -std::numeric_limits<float>::infinity();
  float fclamp_max = std::numeric_limits<float>::infinity();
  bool bias = false;  // fp32: NPU_MM_FLAG_BIAS, float bias[out_c] at chan_addr
};

/// MATMUL. Batch strides are in elements; default: contiguous batches (0 broadcasts).
struct MatmulArgs {
  uint32_t a_addr = 0, b_addr = 0, out_addr = 0, chan_addr = 0;
  uint32_t m = 1, k = 1, n = 1;
  uint32_t batch = 1;
  std::optional<uint32_t> a_batch_stride = std::nullopt, b_batch_stride = std::nullopt,
                          out_batch_stride = std::nullopt;
  uint8_t a_dtype = NPU_DTYPE_INT8, b_dtype = NPU_DTYPE_INT8, out_dtype = NPU_DTYPE_INT8;
  int32_t a_zp = 0, out_zp = 0;
  std::optional<int32_t> clamp_min = std::nullopt, clamp_max = std::nullopt;
  float fclamp_min = -std::numeric_limits<float>::infinity();
  float fclamp_max = std::numeric_limits<float>::infinity();
  bool bias = false;         // fp32: NPU_MM_FLAG_BIAS, float bias[n] at chan_addr
  bool transpose_b = false;  // NPU_MM_FLAG_TRANSPOSE_B: B stored [n][k]
};

/// ELTWISE. Strides in elements; default: contiguous over shape ({0,0,0,1} etc. broadcast).
struct EltwiseArgs {
  uint8_t op = NPU_ELTWISE_ADD;
  uint8_t dtype = NPU_DTYPE_FP32;
  std::array<uint32_t, 4> shape = {1, 1, 1, 1};
  uint32_t a_addr = 0, b_addr = 0, out_addr = 0;
  std::optional<std::array<uint32_t, 4>> a_stride = std::nullopt, b_stride = std::nullopt,
                                         out_stride = std::nullopt;
};

/// ACTIVATION. Strides in elements; default contiguous over shape.
struct ActivationArgs {
  uint8_t func = NPU_ACT_COPY;
  uint8_t dtype = NPU_DTYPE_FP32;
  std::array<uint32_t, 4> shape = {1, 1, 1, 1};
  uint32_t in_addr = 0, out_addr = 0;
  std::optional<std::array<uint32_t, 4>> in_stride = std::nullopt, out_stride = std::nullopt;
  float alpha = 0.0f, beta = 0.0f;
};

/// POOL. out_h/out_w 0 = derived from the window formula.
struct PoolArgs {
  uint8_t kind = NPU_POOL_MAX;
  uint8_t dtype = NPU_DTYPE_FP32;
  uint32_t in_addr = 0, out_addr = 0;
  uint16_t in_h = 1, in_w = 1, channels = 1;
  uint16_t out_h = 0, out_w = 0;
  uint16_t k_h = 1, k_w = 1;
  uint8_t stride_h = 1, stride_w = 1;
  uint8_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool count_pad = false;  // AVG: NPU_POOL_FLAG_COUNT_PAD
};

struct SoftmaxArgs {
  uint32_t in_addr = 0, out_addr = 0;
  uint32_t rows = 1, len = 1;
  bool log = false;  // NPU_SOFTMAX_FLAG_LOG
};

struct ScaleShiftArgs {
  uint32_t in_addr = 0, out_addr = 0;
  uint32_t scale_addr = 0, shift_addr = 0;
  uint32_t outer = 1, channels = 1;
};

/// QUANTIZE (fp32 -> dtype) and DEQUANTIZE (dtype -> fp32).
struct QuantArgs {
  uint32_t in_addr = 0, out_addr = 0;
  uint32_t count = 1;
  uint32_t channels = 1, inner = 1;
  uint32_t params_addr = 0;  // npu_qparam[channels] when channels > 1
  float scale = 1.0f;
  int32_t zp = 0;
  uint8_t dtype = NPU_DTYPE_INT8;  // the integer side
};

/// REQUANTIZE. Clamps default to the output dtype's range.
struct RequantArgs {
  uint32_t in_addr = 0, out_addr = 0;
  uint32_t count = 1;
  int32_t multiplier = 1 << 30, shift = 30;  // default scale 1.0
  int32_t in_zp = 0, out_zp = 0;
  std::optional<int32_t> clamp_min = std::nullopt, clamp_max = std::nullopt;
  uint8_t in_dtype = NPU_DTYPE_INT32, out_dtype = NPU_DTYPE_INT8;
};

struct TransposeArgs {
  uint32_t in_addr = 0, out_addr = 0;
  std::array<uint32_t, 4> in_shape = {1, 1, 1, 1};
  std::array<uint8_t, 4> perm = {0, 1, 2, 3};
  uint32_t elem_size = 4;
};

struct ReduceArgs {
  uint8_t kind = NPU_REDUCE_SUM;
  uint32_t in_addr = 0, out_addr = 0;
  uint32_t outer = 1, len = 1, inner = 1;
};

/// Builds a command buffer. Every command method returns the new command's index. The
/// builder does not validate; run validate() on finish()'s result (the compiler does).
class CommandBufferBuilder {
 public:
  uint32_t dma_load(const DmaArgs& a);
  uint32_t dma_store(const DmaArgs& a);
  uint32_t conv2d(const Conv2dArgs& a);
  uint32_t matmul(const MatmulArgs& a);
  uint32_t eltwise(const EltwiseArgs& a);
  uint32_t activation(const ActivationArgs& a);
  uint32_t pool(const PoolArgs& a);
  uint32_t softmax(const SoftmaxArgs& a);
  uint32_t scale_shift(const ScaleShiftArgs& a);
  uint32_t quantize(const QuantArgs& a);
  uint32_t dequantize(const QuantArgs& a);
  uint32_t requantize(const RequantArgs& a);
  uint32_t transpose(const TransposeArgs& a);
  uint32_t reduce(const ReduceArgs& a);
  uint32_t sem_signal(uint8_t engine, uint32_t sem, uint32_t count = 1);
  uint32_t sem_wait(uint8_t engine, uint32_t sem, uint32_t count = 1);
  uint32_t marker(uint8_t engine, uint32_t id);
  uint32_t nop(uint8_t engine = NPU_ENGINE_CP);
  uint32_t fence(bool irq = false, uint32_t value = 0);
  /// A FENCE marked as a safe point (NPU_FENCE_FLAG_PREEMPT, ISA 1.2): the caller promises
  /// that nothing live stays in SRAM across it; semaphores must be 0 there (validated).
  uint32_t safe_point();
  uint32_t end();
  /// Appends a raw command as is (for tests of invalid buffers and for tools).
  uint32_t add(const npu_cmd& cmd);

  /// Appends END unless the last command already is END, then returns header + commands.
  /// header.required_features = required_features | command_features() of every command.
  std::vector<std::byte> finish(uint64_t required_features = 0);

  size_t size() const { return cmds_.size(); }
  std::span<const npu_cmd> commands() const { return cmds_; }
  /// Mutable access to an appended command (tests poke fields to make it invalid).
  npu_cmd& cmd(size_t index) { return cmds_.at(index); }
  void clear() { cmds_.clear(); }

  /// A contiguous 4-D view: strides {s1*s2*s3, s2*s3, s3, 1} elements.
  static npu_vtensor contiguous(uint32_t addr, std::array<uint32_t, 4> shape);
  /// (in + pad0 + pad1 - dil*(k-1) - 1) / stride + 1, or 0 when the window does not fit.
  static uint32_t conv_out_size(uint32_t in, uint32_t pad0, uint32_t pad1, uint32_t k,
                                uint32_t dil = 1, uint32_t stride = 1);
  /// Serializes commands behind a header (no END appended, features as given).
  static std::vector<std::byte> serialize(std::span<const npu_cmd> cmds,
                                          uint64_t required_features);

 private:
  uint32_t push(const npu_cmd& cmd);
  std::vector<npu_cmd> cmds_;
};

}  // namespace npu::isa

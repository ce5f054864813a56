// CommandBufferBuilder: typed construction of ISA command buffers (uapi/npu_isa.h). One method
// per command taking a small designated-initializer-friendly argument struct with sensible
// defaults (contiguous strides, stride/dilation 1, clamps at the dtype's range), so tests and
// the compiler never fill npu_cmd bytes by hand. The argument structs are generated from the
// payload field table (npu/isa/fields.def); a builder is single-threaded, a plain value.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "npu/isa/fields.def"
#include "npu_isa.h"

namespace npu::isa {

/// The argument structs' payload members come from the field table (npu/isa/fields.def, its
/// BUILD column): one member per `arg` or `opt` field, in struct order, named and defaulted
/// there; members after them are the command's flags and other non-field arguments. Types:
/// the field's element type, std::array for arrays; `opt` members are std::optional and the
/// builder derives an absent one (the table's comments say how).
namespace fields {
using U8 = uint8_t;
using U16 = uint16_t;
using U32 = uint32_t;
using U64 = uint64_t;
using S32 = int32_t;
using F32 = float;
/// An argument member's type: T for scalars, std::array<T, N> for arrays.
template <typename T, int N>
using Arg = std::conditional_t<N == 1, T, std::array<T, N>>;
}  // namespace fields

#define NPU_ARG_arg(T, N, NAME, ...) fields::Arg<fields::T, N> NAME = __VA_ARGS__;
#define NPU_ARG_opt(T, N, NAME) std::optional<fields::Arg<fields::T, N>> NAME = std::nullopt;
#define NPU_ARG_set(...)
#define NPU_ARG(P, MEMBER, T, N, ENUM, STYLE, BUILD, ...) \
  NPU_ARG_##BUILD(T, N __VA_OPT__(, ) __VA_ARGS__)
#define NPU_ARG_NONE(P, MEMBER)

/// DMA_LOAD / DMA_STORE. Box dims (x, y, z), x innermost.
struct DmaArgs {
  NPU_FIELDS_dma(NPU_ARG, NPU_ARG_NONE)
};

/// CONV2D. out_h/out_w 0 = derived from the conv formula; clamps default to the output
/// dtype's range (int) and -inf/+inf (fp32).
struct Conv2dArgs {
  NPU_FIELDS_conv2d(NPU_ARG, NPU_ARG_NONE) bool bias =
      false;  // float modes: NPU_MM_FLAG_BIAS, float bias[out_c] at chan_addr
};

/// MATMUL. Batch strides are in elements; default: contiguous batches (0 broadcasts).
struct MatmulArgs {
  NPU_FIELDS_matmul(NPU_ARG, NPU_ARG_NONE) bool bias =
      false;                 // float modes: NPU_MM_FLAG_BIAS, float bias[n] at chan_addr
  bool transpose_b = false;  // NPU_MM_FLAG_TRANSPOSE_B: B stored [n][k]
};

/// ELTWISE. Strides in elements; default: contiguous over shape ({0,0,0,1} etc. broadcast).
struct EltwiseArgs {
  NPU_FIELDS_eltwise(NPU_ARG, NPU_ARG_NONE)
};

/// ACTIVATION. Strides in elements; default contiguous over shape.
struct ActivationArgs {
  NPU_FIELDS_activation(NPU_ARG, NPU_ARG_NONE)
};

/// POOL. out_h/out_w 0 = derived from the window formula.
struct PoolArgs {
  NPU_FIELDS_pool(NPU_ARG, NPU_ARG_NONE) bool count_pad = false;  // AVG: NPU_POOL_FLAG_COUNT_PAD
};

struct SoftmaxArgs {
  NPU_FIELDS_softmax(NPU_ARG, NPU_ARG_NONE) bool log = false;  // NPU_SOFTMAX_FLAG_LOG
};

struct ScaleShiftArgs {
  NPU_FIELDS_scale_shift(NPU_ARG, NPU_ARG_NONE)
};

/// QUANTIZE (fp32 -> dtype) and DEQUANTIZE (dtype -> fp32).
struct QuantArgs {
  NPU_FIELDS_quant(NPU_ARG, NPU_ARG_NONE) uint8_t dtype = NPU_DTYPE_INT8;  // the integer side
};

/// REQUANTIZE. Clamps default to the output dtype's range.
struct RequantArgs {
  NPU_FIELDS_requant(NPU_ARG, NPU_ARG_NONE)
};

struct TransposeArgs {
  NPU_FIELDS_transpose(NPU_ARG, NPU_ARG_NONE)
};

struct ReduceArgs {
  NPU_FIELDS_reduce(NPU_ARG, NPU_ARG_NONE)
};

/// MOMENTS: mean and mean of squares of fp32 [outer][len][inner] over len.
struct MomentsArgs {
  NPU_FIELDS_moments(NPU_ARG, NPU_ARG_NONE)
};

#undef NPU_ARG_NONE
#undef NPU_ARG
#undef NPU_ARG_set
#undef NPU_ARG_opt
#undef NPU_ARG_arg

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
  uint32_t moments(const MomentsArgs& a);
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

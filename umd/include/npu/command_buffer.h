// CommandBuffer: records ISA commands (uapi/npu_isa.h) for one Device, with the Buffers they
// touch, ready for Context::submit().
//
// Semantics: one typed method per ISA command, over isa::CommandBufferBuilder. The DMA
// methods take a Buffer and a byte offset instead of a raw device address and record the
// reference with its access (dma_load marks its source READ, dma_store its destination
// WRITE); use() adds a reference explicitly (e.g. for a raw buffer from from_bytes()).
// Which errors appear when (as IREE's command_buffer.h spells out):
//  - record time: nothing is checked except that a Buffer belongs to this Device; the
//    first such error is latched and returned by finalize();
//  - finalize(): the whole buffer is validated once with isa::validate() against
//    Device::config() (EINVAL, "finalize: command 4 (conv2d): field out_h: expected 14,
//    got 15"), then every DRAM range is checked against the referenced Buffers (EFAULT,
//    naming the command, field and range) and the bytes are uploaded to the CommandBuffer's
//    own BO. With FinalizeOptions::skip_validation (emulator only, DRM_NPU_CAP_SKIP_VALIDATION)
//    neither check runs and SUBMIT carries DRM_NPU_SUBMIT_SKIP_VALIDATION, so the device
//    meets the bad command and reports a fault at execution time;
//  - execution: faults, reported by Job::wait().
// Recording after finalize() un-finalizes; the next submit finalizes again.
//
// Threading: not thread-safe; record from one thread at a time.
// Lifetime: move-only; owns its BO. Buffers are referenced by handle: keep them alive until
// the submit that references them returned (the kernel then holds their memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "npu/buffer.h"
#include "npu/device.h"
#include "npu/expected.h"
#include "npu/isa/builder.h"
#include "npu/isa/validate.h"
#include "npu_accel.h"

namespace npu {

enum class Access : uint32_t {
  kRead = DRM_NPU_ACCESS_READ,
  kWrite = DRM_NPU_ACCESS_WRITE,
  kReadWrite = DRM_NPU_ACCESS_READ | DRM_NPU_ACCESS_WRITE,
};

struct FinalizeOptions {
  /// Send the bytes unvalidated (DRM_NPU_SUBMIT_SKIP_VALIDATION), to exercise device faults.
  bool skip_validation = false;
};

/// A Buffer referenced by the command buffer, and how (for inspection and the C API).
struct BufferUse {
  uint32_t handle = 0;
  uint32_t access = 0;  // DRM_NPU_ACCESS_*
  uint64_t device_address = 0;
  uint64_t size = 0;  // allocation size
};

class CommandBuffer {
 public:
  explicit CommandBuffer(Device device);
  /// A command buffer of prebuilt bytes (header + commands), e.g. from npu-as or the
  /// compiler. Add its Buffers with use(). The bytes are validated by finalize().
  static CommandBuffer from_bytes(Device device, std::span<const std::byte> bytes);

  CommandBuffer(CommandBuffer&&) noexcept = default;
  CommandBuffer& operator=(CommandBuffer&&) noexcept = default;
  CommandBuffer(const CommandBuffer&) = delete;
  CommandBuffer& operator=(const CommandBuffer&) = delete;
  ~CommandBuffer() = default;

  // Commands. Each returns the command's index. `args.dram` of the DMA methods is replaced
  // by buffer.device_address() + offset.
  uint32_t dma_load(const Buffer& src, uint64_t offset, isa::DmaArgs args);
  uint32_t dma_store(const Buffer& dst, uint64_t offset, isa::DmaArgs args);
  uint32_t conv2d(const isa::Conv2dArgs& a) { return touch(builder_.conv2d(a)); }
  uint32_t matmul(const isa::MatmulArgs& a) { return touch(builder_.matmul(a)); }
  uint32_t eltwise(const isa::EltwiseArgs& a) { return touch(builder_.eltwise(a)); }
  uint32_t activation(const isa::ActivationArgs& a) { return touch(builder_.activation(a)); }
  uint32_t pool(const isa::PoolArgs& a) { return touch(builder_.pool(a)); }
  uint32_t softmax(const isa::SoftmaxArgs& a) { return touch(builder_.softmax(a)); }
  uint32_t scale_shift(const isa::ScaleShiftArgs& a) { return touch(builder_.scale_shift(a)); }
  uint32_t quantize(const isa::QuantArgs& a) { return touch(builder_.quantize(a)); }
  uint32_t dequantize(const isa::QuantArgs& a) { return touch(builder_.dequantize(a)); }
  uint32_t requantize(const isa::RequantArgs& a) { return touch(builder_.requantize(a)); }
  uint32_t transpose(const isa::TransposeArgs& a) { return touch(builder_.transpose(a)); }
  uint32_t reduce(const isa::ReduceArgs& a) { return touch(builder_.reduce(a)); }
  uint32_t moments(const isa::MomentsArgs& a) { return touch(builder_.moments(a)); }
  uint32_t sem_signal(uint8_t engine, uint32_t sem, uint32_t count = 1) {
    return touch(builder_.sem_signal(engine, sem, count));
  }
  uint32_t sem_wait(uint8_t engine, uint32_t sem, uint32_t count = 1) {
    return touch(builder_.sem_wait(engine, sem, count));
  }
  uint32_t marker(uint8_t engine, uint32_t id) { return touch(builder_.marker(engine, id)); }
  uint32_t nop(uint8_t engine = NPU_ENGINE_CP) { return touch(builder_.nop(engine)); }
  uint32_t fence(bool irq = false, uint32_t value = 0) { return touch(builder_.fence(irq, value)); }
  /// Appends a raw command as is (invalid commands for tests; validated at finalize).
  uint32_t add(const npu_cmd& cmd) { return touch(builder_.add(cmd)); }

  /// References `buffer` with `access` (merged with earlier references of the same Buffer).
  void use(const Buffer& buffer, Access access);

  /// Validates, checks DRAM ranges and uploads. Idempotent until the next recording.
  Expected<void> finalize(FinalizeOptions options = {});

  bool finalized() const { return finalized_; }
  /// The finalized bytes (header + commands): empty before finalize(), except from_bytes()'s
  /// (its input).
  std::span<const std::byte> bytes() const { return bytes_; }
  /// The validated program (nullopt before finalize() or with skip_validation).
  const std::optional<isa::Program>& program() const { return program_; }
  /// The referenced Buffers (not including the CommandBuffer's own BO).
  std::span<const BufferUse> uses() const { return uses_; }
  /// SUBMIT flags the finalized buffer needs.
  uint32_t submit_flags() const { return submit_flags_; }
  /// The BO holding the finalized bytes; null before finalize().
  const Buffer* bo() const { return bo_ ? &*bo_ : nullptr; }
  const Device& device() const { return device_; }
  /// Number of recorded commands (raw buffers: 0).
  size_t size() const { return builder_.size(); }

 private:
  uint32_t touch(uint32_t index) {
    finalized_ = false;
    return index;
  }
  void reference(const Buffer& buffer, uint32_t access, const char* what);
  Expected<void> check_ranges() const;

  Device device_;
  isa::CommandBufferBuilder builder_;
  bool raw_ = false;  // made by from_bytes(): bytes_ holds its input from the start
  std::vector<BufferUse> uses_;
  std::optional<Error> record_error_;
  bool finalized_ = false;
  std::vector<std::byte> bytes_;
  std::optional<isa::Program> program_;
  uint32_t submit_flags_ = 0;
  std::optional<Buffer> bo_;
};

}  // namespace npu

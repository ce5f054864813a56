// Buffer: one buffer object (BO) in device memory, owned RAII.
//
// Semantics: allocate() creates a zero-filled BO (BO_CREATE then BO_INFO) at a device
// virtual address chosen by the kernel, or at BufferOptions::fixed_va (DRM_NPU_BO_FIXED_VA,
// for user-managed address spaces; it must be aligned to VaRange::align and inside the range).
// The host mapping is made lazily by the first map(), write() or read() and kept until the
// Buffer dies; bytes() is the mapping of size() bytes, empty while unmapped. The device sees
// host writes and the host sees device writes without flushing (the mapping is coherent);
// ordering against a job comes from Context::submit() and Job::wait(), or from wait_idle()
// (every job that uses the BO, whichever context submitted it).
// A command buffer tells the kernel which BOs a job may touch and how
// (CommandBuffer::dma_load marks its source READ, dma_store its destination WRITE).
//
// Threading: allocation and destruction from any thread; map()/write()/read() on one Buffer
// must not race each other (the first map() is not synchronized); the bytes may be accessed
// from any thread with the usual data-race rules.
// Lifetime: move-only. The destructor unmaps and closes the handle (BO_CLOSE); the kernel
// keeps the memory while a submitted job still uses it, so a Buffer may be dropped right
// after submit. A Buffer keeps its device's shared state alive (see device.h), so it may
// outlive the Device handle it came from.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "npu/device.h"
#include "npu/expected.h"
#include "npu/unique_fd.h"

namespace npu {

struct BufferOptions {
  /// The device may only read this BO (DRM_NPU_BO_DEVICE_READ_ONLY).
  bool device_read_only = false;
  /// Place the BO at this device VA (DRM_NPU_BO_FIXED_VA).
  std::optional<uint64_t> fixed_va = std::nullopt;
};

class Buffer {
 public:
  /// Allocates `size` bytes (1 .. max_bo_size). Errors name the size, e.g.
  /// "allocate: 4096 bytes: BO_CREATE failed: Cannot allocate memory".
  static Expected<Buffer> allocate(const Device& device, uint64_t size, BufferOptions options = {});

  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  /// Maps the BO (first call) and returns its bytes; later calls return the same span.
  Expected<std::span<std::byte>> map();
  /// The mapped bytes, empty until map() succeeded.
  std::span<std::byte> bytes() const;
  /// Copies `data` to byte `offset` (maps first). ERANGE when it does not fit.
  Expected<void> write(uint64_t offset, std::span<const std::byte> data);
  /// Copies size of `out` bytes from byte `offset` (maps first). ERANGE when out of range.
  Expected<void> read(uint64_t offset, std::span<std::byte> out);

  /// Waits until no queued or running job uses the BO (DRM_IOCTL_NPU_BO_WAIT, API 1.3), of
  /// any context, or until `timeout` passes (0 polls). ETIMEDOUT / EBUSY while one does;
  /// EOPNOTSUPP on a device without DRM_NPU_CAP_BO_WAIT.
  Expected<void> wait_idle(std::chrono::nanoseconds timeout = std::chrono::nanoseconds::max());

  /// A descriptor for the BO's pages (BO_EXPORT, API 1.3): Device::import_buffer() makes it a
  /// Buffer of another Device, in this process or another (send the descriptor over a UNIX
  /// socket). The pages live while any Buffer, queued job or such descriptor holds them.
  Expected<UniqueFd> export_fd(bool cloexec = true) const;

  /// Unmaps and closes now, reporting errors the destructor would only log. The Buffer is
  /// empty afterwards.
  Expected<void> close();

  uint64_t device_address() const { return va_; }
  /// Bytes requested at allocation.
  uint64_t size() const { return size_; }
  /// Bytes of the BO (rounded up to pages by the kernel).
  uint64_t allocation_size() const { return bo_size_; }
  uint32_t handle() const { return handle_; }
  bool device_read_only() const { return read_only_; }
  /// False for a moved-from or closed Buffer.
  explicit operator bool() const { return handle_ != 0; }
  /// The device state the BO belongs to.
  const std::shared_ptr<detail::DeviceState>& device_state() const { return dev_; }

 private:
  friend class Device;
  Buffer() = default;
  /// Fills handle, addresses and sizes from BO_INFO (after BO_CREATE or BO_IMPORT).
  Expected<void> describe(const std::string& who);
  Expected<void> release();

  std::shared_ptr<detail::DeviceState> dev_;
  uint32_t handle_ = 0;
  uint64_t va_ = 0;
  uint64_t size_ = 0;
  uint64_t bo_size_ = 0;
  uint64_t mmap_offset_ = 0;
  bool read_only_ = false;
  std::byte* map_ = nullptr;
};

}  // namespace npu

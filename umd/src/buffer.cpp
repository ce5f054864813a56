// Buffer: BO_CREATE + BO_INFO at allocation, lazy mmap, BO_CLOSE at destruction.
#include "npu/buffer.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "npu/job.h"
#include "state.h"

namespace npu {

Expected<Buffer> Buffer::allocate(const Device& device, uint64_t size, BufferOptions options) {
  const auto& dev = device.state();
  const std::string who =
      options.fixed_va ? fmt::format("allocate: {} bytes at va {:#x}", size, *options.fixed_va)
                       : fmt::format("allocate: {} bytes", size);
  drm_npu_bo_create c{};
  c.size = size;
  if (options.device_read_only) c.flags |= DRM_NPU_BO_DEVICE_READ_ONLY;
  if (options.fixed_va) {
    c.flags |= DRM_NPU_BO_FIXED_VA;
    c.device_addr = *options.fixed_va;
  }
  NPU_TRY(dev->ioctl(DRM_IOCTL_NPU_BO_CREATE, &c, who));

  Buffer b;  // from here on the destructor closes the handle if a later step fails
  b.dev_ = dev;
  b.handle_ = c.handle;
  b.size_ = size;
  NPU_TRY(b.describe(who));
  return b;
}

Expected<void> Buffer::describe(const std::string& who) {
  drm_npu_bo_info info{};
  info.handle = handle_;
  NPU_TRY(dev_->ioctl(DRM_IOCTL_NPU_BO_INFO, &info, fmt::format("{}: bo {}", who, handle_)));
  va_ = info.device_addr;
  bo_size_ = info.size;
  mmap_offset_ = info.mmap_offset;
  read_only_ = (info.flags & DRM_NPU_BO_DEVICE_READ_ONLY) != 0;
  if (size_ == 0) size_ = info.size;
  return ok();
}

Expected<UniqueFd> Buffer::export_fd(bool cloexec) const {
  const std::string who = fmt::format("export: bo {}", handle_);
  if (dev_ == nullptr) return make_error(EBADF, who + ": the buffer is closed");
  if (!dev_->params.has(DRM_NPU_CAP_BO_SHARING)) {
    return make_error(EOPNOTSUPP, who + ": the device cannot share buffers (API 1.3)");
  }
  drm_npu_bo_export e{};
  e.handle = handle_;
  e.flags = cloexec ? DRM_NPU_EXPORT_CLOEXEC : 0u;
  NPU_TRY(dev_->ioctl(DRM_IOCTL_NPU_BO_EXPORT, &e, who));
  return UniqueFd(e.fd);
}

Expected<Buffer> Device::import_buffer(int fd) const {
  return import_buffer(fd, BufferOptions{});
}

Expected<Buffer> Device::import_buffer(int fd, const BufferOptions& options) const {
  const std::string who = fmt::format("import: fd {}", fd);
  if (!state_->params.has(DRM_NPU_CAP_BO_SHARING)) {
    return make_error(EOPNOTSUPP, who + ": the device cannot share buffers (API 1.3)");
  }
  drm_npu_bo_import im{};
  im.fd = fd;
  if (options.device_read_only) im.flags |= DRM_NPU_BO_DEVICE_READ_ONLY;
  if (options.fixed_va) {
    im.flags |= DRM_NPU_BO_FIXED_VA;
    im.device_addr = *options.fixed_va;
  }
  if (const int err = state_->do_ioctl(DRM_IOCTL_NPU_BO_IMPORT, &im); err != 0) {
    return detail::ioctl_error(who, DRM_IOCTL_NPU_BO_IMPORT, err,
                               err == EINVAL ? "no exported buffer of this device, or its "
                                               "placement was refused"
                                             : "");
  }
  if ((im.flags & DRM_NPU_BO_IMPORT_EXISTED) != 0) {
    return make_error(
        EEXIST, fmt::format("{}: the buffer is already bo {} of this device", who, im.handle));
  }
  Buffer b;
  b.dev_ = state_;
  b.handle_ = im.handle;
  NPU_TRY(b.describe(who));
  return b;
}

Buffer::Buffer(Buffer&& other) noexcept
    : dev_(std::move(other.dev_)),
      handle_(std::exchange(other.handle_, 0)),
      va_(std::exchange(other.va_, 0)),
      size_(std::exchange(other.size_, 0)),
      bo_size_(std::exchange(other.bo_size_, 0)),
      mmap_offset_(std::exchange(other.mmap_offset_, 0)),
      read_only_(std::exchange(other.read_only_, false)),
      map_(std::exchange(other.map_, nullptr)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    (void)release();  // errors are logged by release()
    dev_ = std::move(other.dev_);
    handle_ = std::exchange(other.handle_, 0);
    va_ = std::exchange(other.va_, 0);
    size_ = std::exchange(other.size_, 0);
    bo_size_ = std::exchange(other.bo_size_, 0);
    mmap_offset_ = std::exchange(other.mmap_offset_, 0);
    read_only_ = std::exchange(other.read_only_, false);
    map_ = std::exchange(other.map_, nullptr);
  }
  return *this;
}

Buffer::~Buffer() {
  (void)release();
}

Expected<void> Buffer::close() {
  return release();
}

Expected<void> Buffer::release() {
  if (handle_ == 0) return ok();
  Expected<void> result;
  if (map_ != nullptr) {
    if (dev_->kernel->munmap(map_, bo_size_) != 0) {
      const int err = errno;
      result = make_error(
          err, fmt::format("close: bo {}: munmap failed: {}", handle_, std::strerror(err)));
    }
    map_ = nullptr;
  }
  drm_npu_bo_close c{};
  c.handle = handle_;
  if (auto r = dev_->ioctl(DRM_IOCTL_NPU_BO_CLOSE, &c, fmt::format("close: bo {}", handle_));
      !r && result) {
    result = r.error();
  }
  if (!result) detail::log().warn("{}", result.error().message);
  handle_ = 0;
  dev_.reset();
  return result;
}

Expected<std::span<std::byte>> Buffer::map() {
  if (handle_ == 0) return make_error(EBADF, "map: buffer is empty (moved from or closed)");
  if (map_ == nullptr) {
    void* p = dev_->kernel->mmap(nullptr, bo_size_, PROT_READ | PROT_WRITE, MAP_SHARED, dev_->fd,
                                 static_cast<off_t>(mmap_offset_));
    if (p == MAP_FAILED) {
      const int err = errno;
      return make_error(err, fmt::format("map: bo {} ({} bytes at offset {:#x}): mmap failed: {}",
                                         handle_, bo_size_, mmap_offset_, std::strerror(err)));
    }
    map_ = static_cast<std::byte*>(p);
  }
  return std::span<std::byte>(map_, size_);
}

std::span<std::byte> Buffer::bytes() const {
  return map_ == nullptr ? std::span<std::byte>() : std::span<std::byte>(map_, size_);
}

Expected<void> Buffer::write(uint64_t offset, std::span<const std::byte> data) {
  if (offset > size_ || data.size() > size_ - offset) {
    return make_error(ERANGE, fmt::format("write: bo {}: {} bytes at offset {} exceed its {} bytes",
                                          handle_, data.size(), offset, size_));
  }
  auto m = map();
  if (!m) return m.error();
  if (!data.empty()) std::memcpy(m->data() + offset, data.data(), data.size());
  return ok();
}

Expected<void> Buffer::read(uint64_t offset, std::span<std::byte> out) {
  if (offset > size_ || out.size() > size_ - offset) {
    return make_error(ERANGE, fmt::format("read: bo {}: {} bytes at offset {} exceed its {} bytes",
                                          handle_, out.size(), offset, size_));
  }
  auto m = map();
  if (!m) return m.error();
  if (!out.empty()) std::memcpy(out.data(), m->data() + offset, out.size());
  return ok();
}

Expected<void> Buffer::wait_idle(std::chrono::nanoseconds timeout) {
  const std::string who = fmt::format("wait idle: bo {}", handle_);
  if (dev_ == nullptr) return make_error(EBADF, who + ": the buffer is closed");
  if ((dev_->params.capabilities & DRM_NPU_CAP_BO_WAIT) == 0) {
    return make_error(EOPNOTSUPP, who + ": the device has no BO_WAIT (API 1.3)");
  }
  drm_npu_bo_wait w{};
  w.handle = handle_;
  const int64_t max = std::numeric_limits<int64_t>::max();
  if (timeout == std::chrono::nanoseconds::max()) {
    w.timeout_ns = max;
  } else if (timeout.count() > 0) {
    const int64_t now = monotonic_ns();
    w.timeout_ns = timeout.count() > max - now ? max : now + timeout.count();
  }
  if (const int err = dev_->do_ioctl(DRM_IOCTL_NPU_BO_WAIT, &w); err != 0) {
    return detail::ioctl_error(who, DRM_IOCTL_NPU_BO_WAIT, err,
                               err == ETIMEDOUT || err == EBUSY ? "a job still uses it" : "");
  }
  return ok();
}

}  // namespace npu

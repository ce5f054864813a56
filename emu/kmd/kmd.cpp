// Kmd: the entry points (open, close, ioctl, mmap) and the ioctl dispatch table, shaped as
// the kernel's drm_ioctl(): decode the request, check it against the table entry, copy the
// argument in, call the handler, copy the argument out.
#include "npu/emu/kmd.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <shared_mutex>
#include <unordered_map>

#include "driver.h"
#include "log.h"
#include "npu/emu/credentials.h"
#include "npu_accel.h"

namespace npu::emu {

namespace kmd {
namespace {

struct IoctlDesc {
  IoctlHandler handler = nullptr;
  uint32_t size = 0;      // the argument struct's size
  uint32_t min_size = 0;  // the smallest _IOC_SIZE accepted (a grown struct's first size)
  const char* name = nullptr;
};

// Driver ioctls, indexed by _IOC_NR(request) - DRM_COMMAND_BASE, as drm-shim's per-driver
// table; core DRM ioctls indexed by _IOC_NR(request). Both from uapi/npu_ioctls.def.
constexpr std::array<IoctlDesc, DRM_NPU_NUM_IOCTLS> kIoctls = [] {
  std::array<IoctlDesc, DRM_NPU_NUM_IOCTLS> t{};
#define NPU_IOCTL(NAME, name, type) \
  t[DRM_NPU_##NAME] = {ioctl_##name, sizeof(type), sizeof(type), #NAME};
#include "npu_ioctls.def"
#define NPU_IOCTL_MIN_SIZE(REQ, size) \
  t[_IOC_NR(DRM_IOCTL_##REQ) - DRM_COMMAND_BASE].min_size = (size);
#include "npu_ioctls.def"
  return t;
}();

constexpr std::array<IoctlDesc, DRM_COMMAND_BASE> kCoreIoctls = [] {
  std::array<IoctlDesc, DRM_COMMAND_BASE> t{};
#define NPU_CORE_IOCTL(NAME, name, type) \
  t[_IOC_NR(DRM_IOCTL_##NAME)] = {core_##name, sizeof(type), sizeof(type), #NAME};
#include "npu_ioctls.def"
  return t;
}();

constexpr size_t kMaxArgSize = 128;
constexpr bool fits(const auto& table) {
  for (const IoctlDesc& d : table) {
    if (d.size > kMaxArgSize) return false;
  }
  return true;
}
static_assert(fits(kIoctls) && fits(kCoreIoctls), "raise kMaxArgSize (and NPU_DAEMON_MAX_ARG)");

int fail(int err) {
  errno = err;
  return -1;
}

}  // namespace
}  // namespace kmd

struct Kmd::Impl {
  Impl(isa::DeviceConfig cfg, Options options)
      : drv(std::move(cfg), kmd::UserAccess{options.checked_user_access}) {}

  ~Impl() {
    // Close what the user left open, so that no job outlives the scheduler.
    std::unordered_map<int, std::shared_ptr<kmd::File>> left;
    {
      std::unique_lock lk(files_mu);
      left.swap(files);
    }
    for (auto& [fd, file] : left) release(*file);
  }

  std::shared_ptr<kmd::File> lookup(int fd) const {
    std::shared_lock lk(files_mu);
    const auto it = files.find(fd);
    return it == files.end() ? nullptr : it->second;
  }

  /// Aborts the file's queued jobs, waits for its running ones, frees its BOs and the fd.
  void release(kmd::File& file) {
    std::vector<std::shared_ptr<kmd::Context>> contexts;
    {
      std::lock_guard lk(file.mu);
      contexts = file.close_locked();
    }
    for (auto& ctx : contexts) drv.scheduler->drain(*ctx);
    {
      std::lock_guard lk(file.mu);
      file.release_bos_locked();
    }
    ::close(file.fd());
  }

  kmd::Driver drv;
  mutable std::shared_mutex files_mu;
  std::unordered_map<int, std::shared_ptr<kmd::File>> files;
};

Kmd::Kmd(isa::DeviceConfig cfg) : Kmd(std::move(cfg), Options{}) {}

Kmd::Kmd(isa::DeviceConfig cfg, Options options)
    : impl_(std::make_unique<Impl>(std::move(cfg), options)) {}

Kmd::~Kmd() = default;

const isa::DeviceConfig& Kmd::config() const {
  return impl_->drv.cfg;
}

int Kmd::open() {
  return open(Opener{own_credentials().cap_sys_nice});
}

int Kmd::open(const Opener& who) {
  // A real descriptor, so numbers never clash with other files of the process (or other
  // Kmd instances); it carries no state of its own.
  const int fd = ::eventfd(0, EFD_CLOEXEC);
  if (fd < 0) return -1;
  kmd::File::Policy policy{impl_->drv.limits, impl_->drv.memory, who.realtime};
  auto file = std::make_shared<kmd::File>(fd, std::move(policy));
  {
    std::unique_lock lk(impl_->files_mu);
    impl_->files.emplace(fd, std::move(file));
  }
  kmd::log().debug("open: fd {}", fd);
  return fd;
}

int Kmd::close(int fd) {
  std::shared_ptr<kmd::File> file;
  {
    std::unique_lock lk(impl_->files_mu);
    const auto it = impl_->files.find(fd);
    if (it == impl_->files.end()) return kmd::fail(EBADF);
    file = std::move(it->second);
    impl_->files.erase(it);
  }
  kmd::log().debug("close: fd {}", fd);
  impl_->release(*file);
  return 0;
}

int Kmd::ioctl(int fd, unsigned long request, void* arg) {
  using kmd::log;
  const std::shared_ptr<kmd::File> file = impl_->lookup(fd);
  if (file == nullptr) return kmd::fail(EBADF);

  // As drm_ioctl(): numbers below DRM_COMMAND_BASE are the DRM core's, the rest the driver's.
  const unsigned nr = _IOC_NR(request);
  const kmd::IoctlDesc* desc = nullptr;
  if (_IOC_TYPE(request) == DRM_IOCTL_BASE) {
    if (nr < DRM_COMMAND_BASE) {
      desc = &kmd::kCoreIoctls[nr];
    } else if (nr - DRM_COMMAND_BASE < kmd::kIoctls.size()) {
      desc = &kmd::kIoctls[nr - DRM_COMMAND_BASE];
    }
  }
  if (desc == nullptr || desc->handler == nullptr) {
    log().warn("ioctl: unknown request {:#x} (type {:#x}, nr {:#x}) on fd {}", request,
               _IOC_TYPE(request), nr, fd);
    return kmd::fail(EINVAL);
  }
  // As drm_ioctl() for a grown struct: an older caller's smaller struct (down to the size it
  // first had) is zero-extended, and only its bytes are copied back. Difference with the
  // kernel: drm_ioctl() also takes any other size (truncating a larger one); we want an exact
  // match otherwise, so that a mismatched header is caught at once.
  const uint32_t size = _IOC_SIZE(request);
  if (_IOC_DIR(request) != (_IOC_READ | _IOC_WRITE) || size < desc->min_size || size > desc->size) {
    log().warn("ioctl {}: request {:#x} has direction {} size {}, expected read|write size {}",
               desc->name, request, _IOC_DIR(request), size, desc->size);
    return kmd::fail(EINVAL);
  }

  const kmd::UserAccess& uaccess = impl_->drv.uaccess;
  const auto user_arg = reinterpret_cast<uintptr_t>(arg);
  alignas(8) std::byte data[kmd::kMaxArgSize] = {};
  if (uaccess.copy_from(data, user_arg, size) != 0) {
    log().debug("ioctl {}: argument at {} is not readable", desc->name, arg);
    return kmd::fail(EFAULT);
  }
  const int ret = desc->handler(impl_->drv, *file, data);
  // As drm_ioctl(): the struct is copied out whatever the result (WAIT reports TIMEOUT).
  if (uaccess.copy_to(user_arg, data, size) != 0) {
    log().debug("ioctl {}: argument at {} is not writable", desc->name, arg);
    return kmd::fail(EFAULT);
  }
  if (ret < 0) {
    log().debug("ioctl {} on fd {}: {}", desc->name, fd, std::strerror(-ret));
    return kmd::fail(-ret);
  }
  return 0;
}

namespace {

// The memory of the BO of `file` at mmap `offset` if `length` and `flags` fit it (as the
// kernel's mmap handler checks); nullptr with errno (EINVAL) otherwise.
std::shared_ptr<kmd::BoMemory> bo_memory_for_map(kmd::File& file, uint64_t offset, size_t length,
                                                 int flags) {
  std::shared_ptr<kmd::BoMemory> mem;
  {
    std::lock_guard lk(file.mu);
    const auto bo = file.find_bo_by_offset_locked(offset);
    if (bo != nullptr && length > 0 && kmd::round_up(length, kmd::kPageSize) <= bo->size) {
      mem = bo->mem;
    }
  }
  if (mem == nullptr) {
    kmd::log().debug("mmap: no bo at offset {:#x} with {} bytes on fd {}", offset, length,
                     file.fd());
    errno = EINVAL;
    return nullptr;
  }
  // The user's mapping must see the device's writes and the other way round.
  const int type = flags & MAP_TYPE;
  if (type != MAP_SHARED && type != MAP_SHARED_VALIDATE) {
    kmd::log().debug("mmap: bo mappings must be MAP_SHARED");
    errno = EINVAL;
    return nullptr;
  }
  return mem;
}

}  // namespace

void* Kmd::mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  const std::shared_ptr<kmd::File> file = impl_->lookup(fd);
  if (file == nullptr) {
    errno = EBADF;
    return MAP_FAILED;
  }
  const auto mem = bo_memory_for_map(*file, static_cast<uint64_t>(offset), length, flags);
  if (mem == nullptr) return MAP_FAILED;
  // Pre-fault the pages (one call instead of a fault per 4 KiB page on first touch); very
  // large mappings stay lazy.
  const int populate = length <= kmd::kPopulateLimit ? MAP_POPULATE : 0;
  return ::mmap(addr, length, prot, flags | populate, mem->fd(), 0);
}

int Kmd::export_bo(int fd, uint64_t offset, size_t length, int flags) {
  const std::shared_ptr<kmd::File> file = impl_->lookup(fd);
  if (file == nullptr) return kmd::fail(EBADF);
  const auto mem = bo_memory_for_map(*file, offset, length, flags);
  if (mem == nullptr) return -1;
  return ::fcntl(mem->fd(), F_DUPFD_CLOEXEC, 0);
}

Kmd::FileUsage Kmd::usage(int fd) const {
  const std::shared_ptr<kmd::File> file = impl_->lookup(fd);
  FileUsage u;
  if (file == nullptr) return u;
  std::lock_guard lk(file->mu);
  const kmd::File::Usage f = file->usage_locked();
  u.bos = f.bos;
  u.contexts = f.contexts;
  u.bo_bytes = f.bo_bytes;
  u.jobs_in_flight = f.jobs_in_flight;
  u.realtime = file->policy().realtime;
  return u;
}

Kmd::Limits Kmd::limits() const {
  const kmd::Limits& l = impl_->drv.limits;
  return {l.bo_memory, l.device_bo_memory, l.contexts, l.jobs_in_flight};
}

uint64_t Kmd::device_bo_memory() const {
  return impl_->drv.memory->used();
}

uint64_t Kmd::bo_memory_bytes() {
  return kmd::BoMemory::live_bytes();
}

int Kmd::munmap(void* addr, size_t length) {
  return ::munmap(addr, length);
}

}  // namespace npu::emu

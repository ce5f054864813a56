#include "bo.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "log.h"

namespace npu::emu::kmd {

namespace {
std::atomic<uint64_t> g_live_bytes{0};
std::atomic<uint64_t> g_next_id{1};
}  // namespace

BoMemory::BoMemory(int fd, std::byte* host, uint64_t size, std::shared_ptr<DeviceMemory> account)
    : id_(g_next_id.fetch_add(1, std::memory_order_relaxed)),
      account_(std::move(account)),
      fd_(fd),
      host_(host),
      size_(size) {}

uint64_t BoMemory::live_bytes() {
  return g_live_bytes.load(std::memory_order_relaxed);
}

Expected<std::shared_ptr<BoMemory>> BoMemory::create(uint64_t size,
                                                     std::shared_ptr<DeviceMemory> account) {
  if (account != nullptr && !account->try_charge(size)) {
    return make_error(EDQUOT, quota_message(fmt::format("{} bytes of bo memory on top of the "
                                                        "device's {}",
                                                        size, account->used()),
                                            "the device's bo memory limit", account->limit()));
  }
  // Gives the charge back on every failure below (the BoMemory takes it over on success).
  struct Charge {
    DeviceMemory* account;
    uint64_t size;
    ~Charge() {
      if (account != nullptr) account->release(size);
    }
  } charge{account.get(), size};
  const int fd = memfd_create("npu-bo", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    const int err = errno;
    log().warn("bo: memfd_create failed: {}", std::strerror(err));
    return make_error(ENOMEM, "bo: memfd_create failed: " + std::string(std::strerror(err)));
  }
  // ftruncate gives zero-filled pages, allocated lazily.
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error(ENOMEM, "bo: ftruncate to " + std::to_string(size) +
                                  " bytes failed: " + std::strerror(err));
  }
  // A daemon hands this memfd to its client: once sealed, nobody can truncate pages away
  // under the device (which would be SIGBUS in the driver's process).
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error(ENOMEM, "bo: sealing the memfd failed: " + std::string(std::strerror(err)));
  }
  // Pages are allocated lazily on first touch; BOs up to kPopulateLimit are pre-faulted in one
  // call (a fault per 4 KiB page dominated the host time of large models).
  const int populate = size <= kPopulateLimit ? MAP_POPULATE : 0;
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | populate, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    return make_error(
        ENOMEM, "bo: mmap of " + std::to_string(size) + " bytes failed: " + std::strerror(err));
  }
  g_live_bytes.fetch_add(size, std::memory_order_relaxed);
  charge.account = nullptr;
  return std::shared_ptr<BoMemory>(
      new BoMemory(fd, static_cast<std::byte*>(p), size, std::move(account)));
}

BoMemory::~BoMemory() {
  g_live_bytes.fetch_sub(size_, std::memory_order_relaxed);
  if (account_ != nullptr) account_->release(size_);
  ::munmap(host_, size_);
  ::close(fd_);
}

}  // namespace npu::emu::kmd

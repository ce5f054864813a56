#include "bo.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "log.h"

namespace npu::emu::kmd {

Expected<std::shared_ptr<BoMemory>> BoMemory::create(uint64_t size) {
  const int fd = memfd_create("npu-bo", MFD_CLOEXEC);
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
  return std::shared_ptr<BoMemory>(new BoMemory(fd, static_cast<std::byte*>(p), size));
}

BoMemory::~BoMemory() {
  ::munmap(host_, size_);
  ::close(fd_);
}

}  // namespace npu::emu::kmd

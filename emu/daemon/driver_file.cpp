// FileRegistry and socket_cookie (driver_file.h).
#include "driver_file.h"

#include <sys/socket.h>

#include <iterator>

#ifndef SO_COOKIE
#define SO_COOKIE 57  // Linux 4.12; older libc headers lack the name
#endif

namespace npu::daemon {

void FileRegistry::add(uint64_t cookie, const std::shared_ptr<DriverFile>& file) {
  std::lock_guard lk(mu_);
  std::erase_if(files_, [](const auto& entry) { return entry.second.expired(); });
  files_[cookie] = file;
}

std::shared_ptr<DriverFile> FileRegistry::find(uint64_t cookie) {
  std::lock_guard lk(mu_);
  const auto it = files_.find(cookie);
  return it == files_.end() ? nullptr : it->second.lock();
}

uint64_t socket_cookie(int fd) {
  uint64_t cookie = 0;
  socklen_t len = sizeof(cookie);
  if (::getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len) != 0) return 0;
  return cookie;
}

}  // namespace npu::daemon

// read_file / write_file over POSIX calls, so that every failure has an errno to report.
#include "npu/format/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace npu::format {
namespace {

Error sys_error(int code, const std::string& path, const std::string& what) {
  return make_error(code, path + ": " + what + ": " + std::strerror(code));
}

}  // namespace

Expected<std::vector<std::byte>> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sys_error(errno, path, "cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return sys_error(e, path, "cannot stat");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(EINVAL, path + ": not a regular file");
  }
  std::vector<std::byte> bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  std::byte buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return sys_error(e, path, "read failed");
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), buf, buf + n);
  }
  ::close(fd);
  return bytes;
}

Expected<void> write_file(const std::string& path, std::span<const std::byte> bytes) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return sys_error(errno, path, "cannot create");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return sys_error(e, path, "write failed");
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return sys_error(e, path, "write failed");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return sys_error(e, path, "cannot rename into place");
  }
  return ok();
}

}  // namespace npu::format

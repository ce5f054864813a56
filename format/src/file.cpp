// read_file / write_file over POSIX calls, so that every failure has an errno to report.
#include "npu/format/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace npu::format {
namespace {

Error sys_error(int code, const std::string& path, const std::string& what) {
  return make_error(code, path + ": " + what + ": " + std::strerror(code));
}

/// A regular file opened for reading, and its size.
struct OpenFile {
  int fd;
  size_t size;
};

Expected<OpenFile> open_regular(const std::string& path) {
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
  return OpenFile{fd, static_cast<size_t>(st.st_size)};
}

}  // namespace

Expected<std::vector<std::byte>> read_file(const std::string& path) {
  auto opened = open_regular(path);
  if (!opened) return opened.error();
  const auto [fd, file_size] = *opened;
  // Read straight into the buffer sized by fstat; a file that grew meanwhile is read on to
  // its end (a short probe read at the expected end finds out without growing the buffer).
  std::vector<std::byte> bytes(file_size);
  size_t have = 0;
  for (;;) {
    std::byte probe[4096];
    const bool full = have == bytes.size();
    const ssize_t n = full ? ::read(fd, probe, sizeof(probe))
                           : ::read(fd, bytes.data() + have, bytes.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      return sys_error(e, path, "read failed");
    }
    if (n == 0) break;
    if (full) bytes.insert(bytes.end(), probe, probe + n);
    have += static_cast<size_t>(n);
  }
  bytes.resize(have);
  ::close(fd);
  return bytes;
}

Expected<void> write_file(const std::string& path, std::span<const std::byte> bytes) {
  const std::span<const std::byte> one[] = {bytes};
  return write_file(path, one);
}

Expected<void> write_file(const std::string& path,
                          std::span<const std::span<const std::byte>> pieces) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return sys_error(errno, path, "cannot create");
  for (const std::span<const std::byte> bytes : pieces) {
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

Expected<MappedFile> MappedFile::open(const std::string& path) {
  auto opened = open_regular(path);
  if (!opened) return opened.error();
  const auto [fd, file_size] = *opened;
  const size_t size = file_size;
  if (size == 0) {
    ::close(fd);
    return MappedFile(nullptr, 0);
  }
  // MAP_POPULATE maps the whole file in one call instead of one page fault per page.
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  const int e = errno;
  ::close(fd);
  if (p == MAP_FAILED) return sys_error(e, path, "cannot map");
  return MappedFile(p, size);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace npu::format

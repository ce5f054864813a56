// DriverFile: one open file of the daemon's driver (emu::Kmd::open), shared by the daemon
// connections that are channels to it: the connection that opened it and, for a SHAREABLE
// one, the connections that ATTACHed to it from processes holding its socket (a forked
// child). Closing the last reference closes the driver file: queued jobs aborted, the running
// one drained, BOs and contexts freed (on the thread that drops it).
//
// FileRegistry: the shareable files by the identity of the client end of the socket that
// opened them (SO_COOKIE, unique for the life of the host), for ATTACH.
//
// Threading: DriverFile is immutable after construction; FileRegistry is guarded by a mutex.
// Lifetime: connections hold DriverFiles by shared_ptr; the registry holds weak references.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "npu/emu/kmd.h"

namespace npu::daemon {

class DriverFile {
 public:
  DriverFile(emu::Kmd& kmd, int fd, uint32_t id) : kmd_(kmd), fd_(fd), id_(id) {}
  ~DriverFile() { kmd_.close(fd_); }
  DriverFile(const DriverFile&) = delete;
  DriverFile& operator=(const DriverFile&) = delete;

  int fd() const { return fd_; }
  uint32_t id() const { return id_; }

 private:
  emu::Kmd& kmd_;
  const int fd_;
  const uint32_t id_;
};

class FileRegistry {
 public:
  /// Notes `file` as the one opened over the socket whose client end has `cookie`.
  void add(uint64_t cookie, const std::shared_ptr<DriverFile>& file);
  /// The live file opened over the socket with `cookie`, or nullptr.
  std::shared_ptr<DriverFile> find(uint64_t cookie);

 private:
  std::mutex mu_;
  std::map<uint64_t, std::weak_ptr<DriverFile>> files_;
};

/// The socket cookie (SO_COOKIE) of descriptor `fd`; 0 when it is not a socket.
uint64_t socket_cookie(int fd);

}  // namespace npu::daemon

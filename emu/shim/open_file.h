// OpenFile: one open() of the emulated /dev/accel/accel0 as a shimmed process holds it, the
// object behind every descriptor that refers to that open (dup()s share it). It stands for
// the kernel's struct file: ioctl() and mmap() on any of its descriptors come here.
//
// Two kinds (device.h): in-process, a file of the process's own mock kernel driver; through
// npu-daemon, a channel to a file of the daemon's driver.
//
// Fork: a file belongs to the process generation that made it (fork_generation(), raised in
// every forked child). In a child, an inherited in-process file is dead (ENODEV: the device's
// threads did not survive the fork); an inherited daemon file attaches a channel of the
// child's own on first use and goes on being the same file.
//
// Threading: calls may come from any thread, concurrently. Lifetime: shared by the
// descriptor table's entries and by calls in flight; the destructor is the kernel's release
// (the last reference in this process is gone).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace npu::shim {

/// Raised in the child of every fork() (pthread_atfork); files of an older generation are
/// inherited ones.
uint64_t fork_generation();

class OpenFile {
 public:
  virtual ~OpenFile() = default;

  /// The driver's ioctl through `fd` (one of this file's descriptors): 0 or -1 with errno.
  virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
  /// mmap() of a BO by its mmap offset: the mapping, or MAP_FAILED with errno.
  virtual void* mmap(int fd, void* addr, size_t length, int prot, int flags, off_t offset) = 0;
  /// Called in the forked child (single-threaded, inside the atfork handler): let go of what
  /// the parent's copy of this file uses, without locks or allocation.
  virtual void forked() = 0;
};

}  // namespace npu::shim

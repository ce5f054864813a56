// FdTable: which descriptors of the process are open files of the emulated device, the
// shim's counterpart of the kernel's file-descriptor table. open() of the node adds an entry;
// dup(), dup2(), dup3() and fcntl(F_DUPFD*) add another for the same OpenFile; close() (and
// dup2/dup3 over it) removes one. A descriptor the shim never saw being made (received with
// SCM_RIGHTS, inherited across exec, made by a raw syscall) is adopted when a DRM ioctl
// arrives on it and the device recognises it (device.h).
//
// Threading: one plain mutex, held only for a map lookup or change; no lock is held while a
// file's ioctl runs (a blocking WAIT holds up nobody). empty() is lock-free, so processes
// that never open the node pay one atomic load per hooked call. Fork: the lock is held
// across fork() so that the child's copy of the table is consistent, and released in the
// parent and in the child by the thread that took it (pthread_atfork's discipline). It is a
// plain mutex, not a reader-writer lock, because of that release in the child: glibc's rwlock
// records its writer by thread id, which the child's thread does not share with the parent's,
// and re-creating the lock in place instead (as the first version did) leaves a thread
// sanitizer believing it is still held — its report then re-entered the shim's close() and
// deadlocked the forked child under TSan.
// Lifetime: a process-wide singleton (never destroyed: hooks run during exit).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "open_file.h"

namespace npu::shim {

class FdTable {
 public:
  static FdTable& get();

  bool empty() const { return size_.load(std::memory_order_acquire) == 0; }
  std::shared_ptr<OpenFile> find(int fd) const;
  /// Makes `fd` a descriptor of `file`; returns what `fd` referred to before (dup2 onto a
  /// device descriptor closes that one), so the caller drops it outside the lock.
  std::shared_ptr<OpenFile> add(int fd, std::shared_ptr<OpenFile> file);
  /// Forgets `fd`; returns its file (nullptr when it was not one), to be dropped by the caller.
  std::shared_ptr<OpenFile> remove(int fd);
  /// Every file with at least one descriptor (fstat identifies unknown descriptors by them).
  std::vector<std::pair<int, std::shared_ptr<OpenFile>>> entries() const;

  /// fork(): the prepare handler takes the lock, the parent's handler releases it.
  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork() { mu_.unlock(); }
  /// The child's handler: tells every file it was forked, then releases the lock the prepare
  /// handler took (this thread took it; it is the child's only thread).
  void forked();

 private:
  mutable std::mutex mu_;
  std::unordered_map<int, std::shared_ptr<OpenFile>> fds_;
  std::atomic<size_t> size_{0};
};

}  // namespace npu::shim

// Checked user copies (npu/user_memory.h): the thread's own stack by memcpy, anything else by
// process_vm_readv/writev on this process.
#include "npu/user_memory.h"

#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace npu {
namespace {

// [low, high) of the calling thread's stack mapping, read once per thread; {0, 0} when
// unknown (then every copy takes the checked path).
struct StackRange {
  uintptr_t low = 0;
  uintptr_t high = 0;
};

StackRange read_stack_range() {
  StackRange r;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return r;
  void* addr = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
    r.low = reinterpret_cast<uintptr_t>(addr);
    r.high = r.low + size;
  }
  pthread_attr_destroy(&attr);
  return r;
}

// True when [p, p + n) lies between this frame and the top of the thread's stack: pages the
// thread has already used, so mapped and writable.
bool on_own_stack(uintptr_t p, size_t n) {
  thread_local const StackRange range = read_stack_range();
  const int here = 0;
  const auto sp = reinterpret_cast<uintptr_t>(&here);
  return range.high != 0 && p >= sp && p < range.high && n <= range.high - p;
}

std::atomic<bool> g_unchecked{false};

void fall_back(int err) {
  if (!g_unchecked.exchange(true)) {
    std::fprintf(stderr,
                 "npu: process_vm_readv/writev not permitted (%s): user pointers are copied "
                 "unchecked from now on\n",
                 std::strerror(err));
  }
}

}  // namespace

int copy_from_user(void* dst, uint64_t src, size_t n) {
  if (n == 0) return 0;
  if (src == 0) return EFAULT;
  if (on_own_stack(src, n) || g_unchecked.load(std::memory_order_relaxed)) {
    std::memcpy(dst, reinterpret_cast<const void*>(static_cast<uintptr_t>(src)), n);
    return 0;
  }
  iovec local{dst, n};
  iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(src)), n};
  const ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (got == static_cast<ssize_t>(n)) return 0;
  if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
    fall_back(errno);
    return copy_from_user(dst, src, n);
  }
  return EFAULT;  // an error, or a partial read that stopped at a bad page
}

int copy_to_user(uint64_t dst, const void* src, size_t n) {
  if (n == 0) return 0;
  if (dst == 0) return EFAULT;
  if (on_own_stack(dst, n) || g_unchecked.load(std::memory_order_relaxed)) {
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, n);
    return 0;
  }
  iovec local{const_cast<void*>(src), n};
  iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), n};
  const ssize_t put = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
  if (put == static_cast<ssize_t>(n)) return 0;
  if (put < 0 && (errno == ENOSYS || errno == EPERM)) {
    fall_back(errno);
    return copy_to_user(dst, src, n);
  }
  return EFAULT;
}

}  // namespace npu

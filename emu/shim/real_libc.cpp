// RealLibc resolution (real_libc.h).
#include "real_libc.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace npu::shim {
namespace {

constinit RealLibc g_real{};
constinit std::once_flag g_once;

template <typename F>
void resolve(F& slot, const char* name) {
  void* p = dlsym(RTLD_NEXT, name);
  if (p == nullptr) {
    // No allocation, no stdio: this may run inside a hook during start-up.
    static constexpr char kMsg[] = "npu-shim: cannot resolve the C library's ";
    [[maybe_unused]] ssize_t w = ::write(2, kMsg, sizeof(kMsg) - 1);
    w = ::write(2, name, std::strlen(name));
    w = ::write(2, "\n", 1);
    std::abort();
  }
  slot = reinterpret_cast<F>(p);
}

void resolve_all() {
  RealLibc& r = g_real;
  resolve(r.open, "open");
  resolve(r.openat, "openat");
  resolve(r.close, "close");
  resolve(r.dup, "dup");
  resolve(r.dup2, "dup2");
  resolve(r.dup3, "dup3");
  resolve(r.fcntl, "fcntl");
  resolve(r.ioctl, "ioctl");
  resolve(r.mmap, "mmap");
  resolve(r.stat, "stat");
  resolve(r.lstat, "lstat");
  resolve(r.fstat, "fstat");
  resolve(r.fstatat, "fstatat");
  resolve(r.statx, "statx");
  resolve(r.access, "access");
  resolve(r.faccessat, "faccessat");
  resolve(r.opendir, "opendir");
  resolve(r.readdir, "readdir");
  resolve(r.readdir64, "readdir64");
  resolve(r.closedir, "closedir");
  resolve(r.realpath, "realpath");
  resolve(r.readlink, "readlink");
  resolve(r.readlinkat, "readlinkat");
  resolve(r.fopen, "fopen");
  resolve(r.fopen64, "fopen64");
}

}  // namespace

const RealLibc& real() {
  std::call_once(g_once, resolve_all);
  return g_real;
}

}  // namespace npu::shim

// RealLibc: the C library's own entry points behind the ones the preload shim defines
// (dlsym(RTLD_NEXT, ...)), resolved once on first use. The shim's hooks end up here for
// everything that is not the emulated device, and the shim's own code calls these directly
// when it must not go through its hooks.
//
// Threading: real() may be called from any thread, also before the shim's other statics are
// constructed and after they are destroyed (hooks run during other libraries' constructors
// and destructors); the table is a constant-initialized global filled under std::call_once.
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdio>

namespace npu::shim {

struct RealLibc {
  int (*open)(const char*, int, ...);
  int (*openat)(int, const char*, int, ...);
  int (*close)(int);
  int (*dup)(int);
  int (*dup2)(int, int);
  int (*dup3)(int, int, int);
  int (*fcntl)(int, int, ...);
  int (*ioctl)(int, unsigned long, ...);
  void* (*mmap)(void*, size_t, int, int, int, off_t);
  int (*stat)(const char*, struct stat*);
  int (*lstat)(const char*, struct stat*);
  int (*fstat)(int, struct stat*);
  int (*fstatat)(int, const char*, struct stat*, int);
  int (*statx)(int, const char*, int, unsigned, struct statx*);
  int (*access)(const char*, int);
  int (*faccessat)(int, const char*, int, int);
  DIR* (*opendir)(const char*);
  struct dirent* (*readdir)(DIR*);
  struct dirent64* (*readdir64)(DIR*);
  int (*closedir)(DIR*);
  char* (*realpath)(const char*, char*);
  ssize_t (*readlink)(const char*, char*, size_t);
  ssize_t (*readlinkat)(int, const char*, char*, size_t);
  FILE* (*fopen)(const char*, const char*);
  FILE* (*fopen64)(const char*, const char*);
};

/// The real functions (every member non-null: a missing one aborts with a message).
const RealLibc& real();

}  // namespace npu::shim

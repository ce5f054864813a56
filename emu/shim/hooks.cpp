// The preload shim's entry points: the C library functions a program uses to find, open and
// drive a device node, defined here so that the dynamic linker binds the program (and every
// library it loads, dlopen()ed ones too) to them before libc. Each one answers for the
// emulated /dev/accel/accel0 and its sysfs entries (device.h, fake_tree.h, fd_table.h) and
// passes everything else to the real function untouched (real_libc.h).
//
// Hooked: open, open64, openat, openat64 and their fortified _2 variants, fopen, fopen64,
// close, dup, dup2, dup3, fcntl (F_DUPFD, F_DUPFD_CLOEXEC), ioctl, mmap, mmap64, stat, lstat,
// fstat, fstatat (and their 64 variants, and glibc's __xstat family for older binaries),
// statx, access, faccessat, euidaccess, eaccess, opendir, readdir, readdir64, closedir,
// realpath, __realpath_chk, canonicalize_file_name, readlink, readlinkat, __readlink_chk.
// Not hooked (so not faked): raw syscall(2), io_uring, scandir/glob/nftw over /dev/accel,
// relative paths (a chdir into /dev), statically linked programs.
//
// Threading: every hook may be called from any thread at any time, also during the shim's
// own start-up and the program's exit; none holds a lock across a driver call.
#undef _FORTIFY_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "device.h"
#include "fake_tree.h"
#include "fd_table.h"
#include "no_destructor.h"
#include "npu_accel.h"
#include "real_libc.h"

#define NPU_SHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace npu::shim {
namespace detail {
void device_forked();
}  // namespace detail

namespace {

// --- paths -----------------------------------------------------------------------------------

enum class PathKind { kOther, kNode, kTree };

struct Classified {
  PathKind kind = PathKind::kOther;
  std::string path;  // normalized (kNode, kTree)
};

// "/dev//accel/./accel0/" -> "/dev/accel/accel0": enough normalization to recognise the
// node and the faked directories however a program spells them (no ".." or symlinks).
std::string normalize(std::string_view p) {
  std::string out;
  size_t i = 0;
  while (i < p.size()) {
    while (i < p.size() && p[i] == '/') ++i;
    const size_t j = p.find('/', i);
    const std::string_view part = p.substr(i, j == std::string_view::npos ? p.size() - i : j - i);
    if (!part.empty() && part != ".") {
      out += '/';
      out += part;
    }
    if (j == std::string_view::npos) break;
    i = j;
  }
  return out.empty() ? "/" : out;
}

Classified classify(const char* path) {
  if (path == nullptr || path[0] != '/') return {};
  const std::string_view p(path);
  // Cheap test first: only /dev and /sys paths can be ours.
  if (!p.starts_with("/dev") && !p.starts_with("/sys") && !p.starts_with("//")) return {};
  std::string n = normalize(p);
  if (FakeTree::is_node(n)) return {PathKind::kNode, std::move(n)};
  if (FakeTree::covers(n)) return {PathKind::kTree, std::move(n)};
  return {};
}

// The tree path of a kTree path ("" when the tree could not be built: ENOENT follows).
std::string tree_path(const Classified& c) {
  return FakeTree::get().redirect(c.path).value_or("/nonexistent/npu-shim-tree" + c.path);
}

// --- the device node -------------------------------------------------------------------------

int open_node(int flags) {
  if ((flags & O_CREAT) != 0 && (flags & O_EXCL) != 0) {
    errno = EEXIST;
    return -1;
  }
  if ((flags & O_DIRECTORY) != 0) {
    errno = ENOTDIR;
    return -1;
  }
  auto opened = ShimDevice::get().open((flags & O_CLOEXEC) != 0);
  if (!opened) {
    errno = opened.error().code;
    return -1;
  }
  // A fresh descriptor number: nothing was registered under it.
  FdTable::get().add(opened->fd, std::move(opened->file));
  return opened->fd;
}

int open_path(int dirfd, const char* path, int flags, mode_t mode) {
  const Classified c = classify(path);
  switch (c.kind) {
    case PathKind::kNode:
      return open_node(flags);
    case PathKind::kTree:
      return real().openat(AT_FDCWD, tree_path(c).c_str(), flags, mode);
    case PathKind::kOther:
      break;
  }
  // "accel0" relative to an open /dev/accel directory (fdopendir + openat style).
  if (dirfd >= 0 && path != nullptr && std::string_view(path) == "accel0") {
    char link[PATH_MAX];
    const std::string proc = "/proc/self/fd/" + std::to_string(dirfd);
    const ssize_t n = real().readlink(proc.c_str(), link, sizeof(link));
    if (n > 0 && std::string_view(link, static_cast<size_t>(n)) == FakeTree::get().accel_dir()) {
      return open_node(flags);
    }
  }
  return real().openat(dirfd, path, flags, mode);
}

mode_t mode_arg(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) != 0 ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

// The node's stat: the tree's placeholder file, made a character device 261:0 rw-rw-rw-.
int node_stat(struct stat* st) {
  const std::string p = FakeTree::get().redirect(kNodePath).value_or("");
  if (p.empty() || real().stat(p.c_str(), st) != 0) *st = {};
  st->st_mode = S_IFCHR | 0666;
  st->st_rdev = FakeTree::node_rdev();
  st->st_size = 0;
  st->st_blocks = 0;
  st->st_nlink = 1;
  return 0;
}

void to_statx(const struct stat& st, struct statx* stx) {
  *stx = {};
  stx->stx_mask = STATX_BASIC_STATS;
  stx->stx_blksize = static_cast<uint32_t>(st.st_blksize);
  stx->stx_nlink = static_cast<uint32_t>(st.st_nlink);
  stx->stx_uid = st.st_uid;
  stx->stx_gid = st.st_gid;
  stx->stx_mode = static_cast<uint16_t>(st.st_mode);
  stx->stx_ino = st.st_ino;
  stx->stx_size = static_cast<uint64_t>(st.st_size);
  stx->stx_blocks = static_cast<uint64_t>(st.st_blocks);
  stx->stx_atime = {st.st_atim.tv_sec, static_cast<uint32_t>(st.st_atim.tv_nsec), 0};
  stx->stx_mtime = {st.st_mtim.tv_sec, static_cast<uint32_t>(st.st_mtim.tv_nsec), 0};
  stx->stx_ctime = {st.st_ctim.tv_sec, static_cast<uint32_t>(st.st_ctim.tv_nsec), 0};
  stx->stx_rdev_major = major(st.st_rdev);
  stx->stx_rdev_minor = minor(st.st_rdev);
  stx->stx_dev_major = major(st.st_dev);
  stx->stx_dev_minor = minor(st.st_dev);
}

bool is_device_fd(int fd) {
  return FdTable::get().find(fd) != nullptr;
}

int stat_path(const char* path, struct stat* st, bool follow) {
  const Classified c = classify(path);
  switch (c.kind) {
    case PathKind::kNode:
      return node_stat(st);
    case PathKind::kTree:
      return follow ? real().stat(tree_path(c).c_str(), st)
                    : real().lstat(tree_path(c).c_str(), st);
    case PathKind::kOther:
      break;
  }
  return follow ? real().stat(path, st) : real().lstat(path, st);
}

int fstat_fd(int fd, struct stat* st) {
  return is_device_fd(fd) ? node_stat(st) : real().fstat(fd, st);
}

int fstatat_impl(int dirfd, const char* path, struct stat* st, int flags) {
  if (path != nullptr && path[0] == '\0' && (flags & AT_EMPTY_PATH) != 0)
    return fstat_fd(dirfd, st);
  if (classify(path).kind != PathKind::kOther) {
    return stat_path(path, st, (flags & AT_SYMLINK_NOFOLLOW) == 0);
  }
  return real().fstatat(dirfd, path, st, flags);
}

int access_path(const char* path, int mode) {
  const Classified c = classify(path);
  if (c.kind == PathKind::kNode) {
    if ((mode & X_OK) != 0) {
      errno = EACCES;
      return -1;
    }
    return 0;
  }
  if (c.kind == PathKind::kTree) return real().access(tree_path(c).c_str(), mode);
  return real().access(path, mode);
}

// --- directories -----------------------------------------------------------------------------

struct DirSet {
  std::mutex mu;
  std::set<DIR*> dirs;  // opendir()s of /dev/accel: the node's entry is a DT_CHR
  std::atomic<size_t> size{0};
};

DirSet& accel_dirs() {
  static NoDestructor<DirSet> d;
  return *d;
}

template <typename Dirent>
Dirent* fix_dirent(DIR* d, Dirent* e) {
  if (e == nullptr || std::strcmp(e->d_name, "accel0") != 0) return e;
  DirSet& s = accel_dirs();
  if (s.size.load(std::memory_order_acquire) == 0) return e;
  std::lock_guard lk(s.mu);
  if (s.dirs.count(d) != 0) e->d_type = DT_CHR;
  return e;
}

// --- /proc/self/fd/N of a device descriptor ----------------------------------------------------

std::optional<int> proc_fd(const char* path) {
  if (path == nullptr) return std::nullopt;
  std::string_view p(path);
  const std::string own = "/proc/" + std::to_string(::getpid()) + "/fd/";
  if (p.starts_with("/proc/self/fd/")) {
    p.remove_prefix(14);
  } else if (p.starts_with(own)) {
    p.remove_prefix(own.size());
  } else {
    return std::nullopt;
  }
  if (p.empty() || p.size() > 9) return std::nullopt;
  int fd = 0;
  for (char ch : p) {
    if (ch < '0' || ch > '9') return std::nullopt;
    fd = fd * 10 + (ch - '0');
  }
  return fd;
}

ssize_t readlink_impl(const char* path, char* buf, size_t size) {
  if (const auto fd = proc_fd(path); fd && is_device_fd(*fd)) {
    const size_t n = std::min(size, std::strlen(kNodePath));
    std::memcpy(buf, kNodePath, n);
    return static_cast<ssize_t>(n);
  }
  const Classified c = classify(path);
  if (c.kind == PathKind::kNode) {
    errno = EINVAL;  // not a symlink
    return -1;
  }
  if (c.kind == PathKind::kTree) return real().readlink(tree_path(c).c_str(), buf, size);
  return real().readlink(path, buf, size);
}

char* realpath_impl(const char* path, char* resolved) {
  const Classified c = classify(path);
  if (c.kind == PathKind::kOther) return real().realpath(path, resolved);
  const std::string in_tree =
      c.kind == PathKind::kNode ? FakeTree::get().redirect(kNodePath).value_or("") : tree_path(c);
  char* r = real().realpath(in_tree.c_str(), nullptr);
  if (r == nullptr) return nullptr;
  const std::string out = FakeTree::get().unredirect(r).value_or(r);
  std::free(r);  // NOLINT(cppcoreguidelines-no-malloc): realpath's contract
  if (out.size() >= PATH_MAX) {
    errno = ENAMETOOLONG;
    return nullptr;
  }
  if (resolved == nullptr) return strdup(out.c_str());
  std::memcpy(resolved, out.c_str(), out.size() + 1);
  return resolved;
}

// --- descriptors ----------------------------------------------------------------------------

// After the real dup2/dup3 made `newfd` a copy of `oldfd`: the table follows.
void copied(int oldfd, int newfd) {
  FdTable& t = FdTable::get();
  if (t.empty()) return;
  std::shared_ptr<OpenFile> before;
  if (auto f = t.find(oldfd)) {
    before = t.add(newfd, std::move(f));
  } else {
    before = t.remove(newfd);  // newfd was a device descriptor: dup2 closed it
  }
  if (before != nullptr) {
    before.reset();
    ShimDevice::get().reap();
  }
}

int flags_of_mode(const char* mode) {
  if (mode == nullptr) return O_RDONLY;
  const bool plus = std::strchr(mode, '+') != nullptr;
  int flags = plus ? O_RDWR : (mode[0] == 'r' ? O_RDONLY : O_WRONLY);
  if (mode[0] == 'w') flags |= O_CREAT | O_TRUNC;
  if (mode[0] == 'a') flags |= O_CREAT | O_APPEND;
  if (std::strchr(mode, 'x') != nullptr) flags |= O_EXCL;
  if (std::strchr(mode, 'e') != nullptr) flags |= O_CLOEXEC;
  return flags;
}

FILE* fopen_impl(const char* path, const char* mode,
                 FILE* (*real_fopen)(const char*, const char*)) {
  const Classified c = classify(path);
  if (c.kind == PathKind::kNode) {
    const int fd = open_node(flags_of_mode(mode));
    if (fd < 0) return nullptr;
    FILE* f = ::fdopen(fd, mode);
    if (f == nullptr) {
      const int err = errno;
      ::close(fd);
      errno = err;
    }
    return f;
  }
  if (c.kind == PathKind::kTree) return real_fopen(tree_path(c).c_str(), mode);
  return real_fopen(path, mode);
}

// --- fork ------------------------------------------------------------------------------------

void before_fork() {
  FdTable::get().lock_for_fork();
}
void after_fork_parent() {
  FdTable::get().unlock_after_fork();
}
void after_fork_child() {
  detail::device_forked();  // a new generation first: the files then know they are inherited
  FdTable::get().forked();
}

__attribute__((constructor)) void shim_init() {
  (void)real();
  (void)FdTable::get();
  ::pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}

}  // namespace
}  // namespace npu::shim

using namespace npu::shim;  // NOLINT(google-build-using-namespace): the hooks below only

// ---------------------------------------------------------------------------------------------
// open and friends

NPU_SHIM_EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_path(AT_FDCWD, path, flags, mode);
}

NPU_SHIM_EXPORT int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_path(AT_FDCWD, path, flags | O_LARGEFILE, mode);
}

NPU_SHIM_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_path(dirfd, path, flags, mode);
}

NPU_SHIM_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_path(dirfd, path, flags | O_LARGEFILE, mode);
}

NPU_SHIM_EXPORT int __open_2(const char* path, int flags) {
  return open_path(AT_FDCWD, path, flags, 0);
}
NPU_SHIM_EXPORT int __open64_2(const char* path, int flags) {
  return open_path(AT_FDCWD, path, flags | O_LARGEFILE, 0);
}
NPU_SHIM_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  return open_path(dirfd, path, flags, 0);
}
NPU_SHIM_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  return open_path(dirfd, path, flags | O_LARGEFILE, 0);
}

NPU_SHIM_EXPORT FILE* fopen(const char* path, const char* mode) {
  return fopen_impl(path, mode, real().fopen);
}
NPU_SHIM_EXPORT FILE* fopen64(const char* path, const char* mode) {
  return fopen_impl(path, mode, real().fopen64);
}

// ---------------------------------------------------------------------------------------------
// descriptors

NPU_SHIM_EXPORT int close(int fd) {
  FdTable& t = FdTable::get();
  if (t.empty()) return real().close(fd);
  std::shared_ptr<OpenFile> file = t.remove(fd);
  const int ret = real().close(fd);
  if (file != nullptr) {
    const int err = errno;
    file.reset();  // the last reference in this process: the kernel's release
    ShimDevice::get().reap();
    errno = err;
  }
  return ret;
}

NPU_SHIM_EXPORT int dup(int oldfd) noexcept {
  const int fd = real().dup(oldfd);
  if (fd >= 0) copied(oldfd, fd);
  return fd;
}

NPU_SHIM_EXPORT int dup2(int oldfd, int newfd) noexcept {
  const int fd = real().dup2(oldfd, newfd);
  if (fd >= 0 && oldfd != newfd) copied(oldfd, fd);
  return fd;
}

NPU_SHIM_EXPORT int dup3(int oldfd, int newfd, int flags) noexcept {
  const int fd = real().dup3(oldfd, newfd, flags);
  if (fd >= 0) copied(oldfd, fd);
  return fd;
}

static int fcntl_impl(int fd, int cmd, void* arg) {
  const int ret = real().fcntl(fd, cmd, arg);
  if (ret >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) copied(fd, ret);
  return ret;
}

NPU_SHIM_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);  // as glibc's own fcntl reads it, whatever the command
  va_end(ap);
  return fcntl_impl(fd, cmd, arg);
}

NPU_SHIM_EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fcntl_impl(fd, cmd, arg);
}

NPU_SHIM_EXPORT int ioctl(int fd, unsigned long request, ...) noexcept {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  FdTable& t = FdTable::get();
  if (auto file = t.find(fd)) return file->ioctl(fd, request, arg);
  // A DRM ioctl on a descriptor the shim did not see being made (received, inherited across
  // exec): the device may know it.
  if (_IOC_TYPE(request) == DRM_IOCTL_BASE && fd >= 0) {
    if (auto file = ShimDevice::get().adopt(fd)) {
      t.add(fd, file);
      return file->ioctl(fd, request, arg);
    }
  }
  return real().ioctl(fd, request, arg);
}

NPU_SHIM_EXPORT void* mmap(void* addr, size_t length, int prot, int flags, int fd,
                           off_t offset) noexcept {
  if (fd >= 0) {
    if (auto file = FdTable::get().find(fd)) {
      return file->mmap(fd, addr, length, prot, flags, offset);
    }
  }
  return real().mmap(addr, length, prot, flags, fd, offset);
}

NPU_SHIM_EXPORT void* mmap64(void* addr, size_t length, int prot, int flags, int fd,
                             off_t offset) noexcept {
  return mmap(addr, length, prot, flags, fd, offset);
}

// ---------------------------------------------------------------------------------------------
// stat and access

NPU_SHIM_EXPORT int stat(const char* path, struct stat* st) noexcept {
  return stat_path(path, st, true);
}
NPU_SHIM_EXPORT int stat64(const char* path, struct stat64* st) noexcept {
  return stat_path(path, reinterpret_cast<struct stat*>(st), true);
}
NPU_SHIM_EXPORT int lstat(const char* path, struct stat* st) noexcept {
  return stat_path(path, st, false);
}
NPU_SHIM_EXPORT int lstat64(const char* path, struct stat64* st) noexcept {
  return stat_path(path, reinterpret_cast<struct stat*>(st), false);
}
NPU_SHIM_EXPORT int fstat(int fd, struct stat* st) noexcept {
  return fstat_fd(fd, st);
}
NPU_SHIM_EXPORT int fstat64(int fd, struct stat64* st) noexcept {
  return fstat_fd(fd, reinterpret_cast<struct stat*>(st));
}
NPU_SHIM_EXPORT int fstatat(int dirfd, const char* path, struct stat* st, int flags) noexcept {
  return fstatat_impl(dirfd, path, st, flags);
}
NPU_SHIM_EXPORT int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) noexcept {
  return fstatat_impl(dirfd, path, reinterpret_cast<struct stat*>(st), flags);
}

// glibc before 2.33 compiled stat() into calls of these (x86_64: the kernel's struct stat).
NPU_SHIM_EXPORT int __xstat(int, const char* path, struct stat* st) {
  return stat_path(path, st, true);
}
NPU_SHIM_EXPORT int __xstat64(int, const char* path, struct stat64* st) {
  return stat_path(path, reinterpret_cast<struct stat*>(st), true);
}
NPU_SHIM_EXPORT int __lxstat(int, const char* path, struct stat* st) {
  return stat_path(path, st, false);
}
NPU_SHIM_EXPORT int __lxstat64(int, const char* path, struct stat64* st) {
  return stat_path(path, reinterpret_cast<struct stat*>(st), false);
}
NPU_SHIM_EXPORT int __fxstat(int, int fd, struct stat* st) {
  return fstat_fd(fd, st);
}
NPU_SHIM_EXPORT int __fxstat64(int, int fd, struct stat64* st) {
  return fstat_fd(fd, reinterpret_cast<struct stat*>(st));
}
NPU_SHIM_EXPORT int __fxstatat(int, int dirfd, const char* path, struct stat* st, int flags) {
  return fstatat_impl(dirfd, path, st, flags);
}
NPU_SHIM_EXPORT int __fxstatat64(int, int dirfd, const char* path, struct stat64* st, int flags) {
  return fstatat_impl(dirfd, path, reinterpret_cast<struct stat*>(st), flags);
}

NPU_SHIM_EXPORT int statx(int dirfd, const char* path_arg, int flags, unsigned int mask,
                          struct statx* stx) noexcept {
  // glibc declares the path nonnull, but the kernel takes NULL with AT_EMPTY_PATH: keep the
  // compiler from assuming it.
  const char* path = path_arg;
  asm("" : "+r"(path));
  const bool empty_path = path != nullptr && path[0] == '\0' && (flags & AT_EMPTY_PATH) != 0;
  if ((empty_path && is_device_fd(dirfd)) || classify(path).kind != PathKind::kOther) {
    struct stat st {};
    const int r = empty_path ? fstat_fd(dirfd, &st)
                             : stat_path(path, &st, (flags & AT_SYMLINK_NOFOLLOW) == 0);
    if (r != 0) return r;
    to_statx(st, stx);
    return 0;
  }
  return real().statx(dirfd, path, flags, mask, stx);
}

NPU_SHIM_EXPORT int access(const char* path, int mode) noexcept {
  return access_path(path, mode);
}
NPU_SHIM_EXPORT int faccessat(int dirfd, const char* path, int mode, int flags) noexcept {
  if (classify(path).kind != PathKind::kOther) return access_path(path, mode);
  return real().faccessat(dirfd, path, mode, flags);
}
NPU_SHIM_EXPORT int euidaccess(const char* path, int mode) noexcept {
  if (classify(path).kind != PathKind::kOther) return access_path(path, mode);
  return real().faccessat(AT_FDCWD, path, mode, AT_EACCESS);
}
NPU_SHIM_EXPORT int eaccess(const char* path, int mode) noexcept {
  return euidaccess(path, mode);
}

// ---------------------------------------------------------------------------------------------
// directories, links

NPU_SHIM_EXPORT DIR* opendir(const char* path) {
  const Classified c = classify(path);
  if (c.kind == PathKind::kNode) {
    errno = ENOTDIR;
    return nullptr;
  }
  if (c.kind != PathKind::kTree) return real().opendir(path);
  DIR* d = real().opendir(tree_path(c).c_str());
  if (d != nullptr && c.path == kAccelDir) {
    DirSet& s = accel_dirs();
    std::lock_guard lk(s.mu);
    s.dirs.insert(d);
    s.size.store(s.dirs.size(), std::memory_order_release);
  }
  return d;
}

NPU_SHIM_EXPORT struct dirent* readdir(DIR* d) {
  return fix_dirent(d, real().readdir(d));
}
NPU_SHIM_EXPORT struct dirent64* readdir64(DIR* d) {
  return fix_dirent(d, real().readdir64(d));
}

NPU_SHIM_EXPORT int closedir(DIR* d) {
  DirSet& s = accel_dirs();
  if (s.size.load(std::memory_order_acquire) != 0) {
    std::lock_guard lk(s.mu);
    s.dirs.erase(d);
    s.size.store(s.dirs.size(), std::memory_order_release);
  }
  return real().closedir(d);
}

NPU_SHIM_EXPORT char* realpath(const char* path, char* resolved) noexcept {
  return realpath_impl(path, resolved);
}
NPU_SHIM_EXPORT char* __realpath_chk(const char* path, char* resolved, size_t) noexcept {
  return realpath_impl(path, resolved);
}
NPU_SHIM_EXPORT char* canonicalize_file_name(const char* path) noexcept {
  return realpath_impl(path, nullptr);
}

NPU_SHIM_EXPORT ssize_t readlink(const char* path, char* buf, size_t size) noexcept {
  return readlink_impl(path, buf, size);
}
NPU_SHIM_EXPORT ssize_t __readlink_chk(const char* path, char* buf, size_t size, size_t) noexcept {
  return readlink_impl(path, buf, size);
}
NPU_SHIM_EXPORT ssize_t readlinkat(int dirfd, const char* path, char* buf, size_t size) noexcept {
  if (proc_fd(path) || classify(path).kind != PathKind::kOther) {
    return readlink_impl(path, buf, size);
  }
  return real().readlinkat(dirfd, path, buf, size);
}

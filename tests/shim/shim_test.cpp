// The preload shim's behaviour as a program sees it (run under npu-shim, in-process and
// through npu-daemon): the fake node and sysfs, descriptor bookkeeping (dup2/dup3/fcntl),
// pass-through of everything that is not the device, a dlopen()ed library reaching the node,
// and many threads opening and submitting at once.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "npu/isa/builder.h"
#include "npu_accel.h"

namespace {

constexpr const char* kNode = "/dev/accel/accel0";

int node() {
  return ::open(kNode, O_RDWR | O_CLOEXEC);
}

bool is_device(int fd) {
  drm_npu_get_param g{};
  g.param = DRM_NPU_PARAM_API_VERSION;
  return ::ioctl(fd, DRM_IOCTL_NPU_GET_PARAM, &g) == 0;
}

int64_t deadline_ms(int64_t ms) {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec + ms * 1'000'000;
}

TEST(ShimNode, PathCallsSeeACharacterDevice) {
  struct stat st {};
  ASSERT_EQ(::stat(kNode, &st), 0) << std::strerror(errno);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(major(st.st_rdev), unsigned{DRM_NPU_ACCEL_MAJOR});
  EXPECT_EQ(minor(st.st_rdev), 0u);
  ASSERT_EQ(::lstat("//dev/./accel//accel0", &st), 0) << "spellings of the same path";
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  struct statx sx {};
  ASSERT_EQ(::statx(AT_FDCWD, kNode, 0, STATX_BASIC_STATS, &sx), 0);
  EXPECT_TRUE(S_ISCHR(sx.stx_mode));
  EXPECT_EQ(sx.stx_rdev_major, unsigned{DRM_NPU_ACCEL_MAJOR});
  EXPECT_EQ(::access(kNode, R_OK | W_OK), 0);
  EXPECT_EQ(::faccessat(AT_FDCWD, kNode, F_OK, 0), 0);
  char resolved[PATH_MAX];
  ASSERT_NE(::realpath(kNode, resolved), nullptr);
  EXPECT_STREQ(resolved, kNode);
  EXPECT_EQ(::open("/dev/accel/accel1", O_RDWR), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_EQ(::open(kNode, O_RDWR | O_DIRECTORY), -1);
  EXPECT_EQ(errno, ENOTDIR);
  EXPECT_EQ(::open(kNode, O_RDWR | O_CREAT | O_EXCL, 0600), -1);
  EXPECT_EQ(errno, EEXIST);
}

TEST(ShimNode, DirectoryListsTheNode) {
  DIR* d = ::opendir("/dev/accel/");
  ASSERT_NE(d, nullptr) << std::strerror(errno);
  std::vector<std::string> names;
  unsigned char type = DT_UNKNOWN;
  for (const dirent* e = ::readdir(d); e != nullptr; e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    names.emplace_back(e->d_name);
    type = e->d_type;
  }
  ::closedir(d);
  ASSERT_EQ(names, std::vector<std::string>{"accel0"});
  EXPECT_EQ(type, DT_CHR);
}

TEST(ShimNode, SysfsNamesTheDriver) {
  FILE* f = std::fopen("/sys/class/accel/accel0/dev", "r");
  ASSERT_NE(f, nullptr);
  char text[64] = {};
  ASSERT_NE(std::fgets(text, sizeof(text), f), nullptr);
  std::fclose(f);
  EXPECT_STREQ(text, "261:0\n");
  char link[256] = {};
  const ssize_t n = ::readlink("/sys/dev/char/261:0", link, sizeof(link) - 1);
  ASSERT_GT(n, 0) << std::strerror(errno);
  EXPECT_STREQ(link, "../../class/accel/accel0");
  const int fd = ::open("/sys/dev/char/261:0/device/uevent", O_RDONLY);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  char uevent[256] = {};
  ASSERT_GT(::read(fd, uevent, sizeof(uevent) - 1), 0);
  ::close(fd);
  EXPECT_NE(std::strstr(uevent, "DRIVER=npu\n"), nullptr) << uevent;
}

TEST(ShimDescriptors, OpenFdIsTheNodeEverywhere) {
  const int fd = node();
  ASSERT_GE(fd, 0) << std::strerror(errno);
  struct stat st {};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  ASSERT_EQ(::fstatat(fd, "", &st, AT_EMPTY_PATH), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  char link[PATH_MAX] = {};
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  ASSERT_GT(::readlink(proc.c_str(), link, sizeof(link) - 1), 0);
  EXPECT_STREQ(link, kNode);
  EXPECT_EQ(::fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  ::close(fd);
}

TEST(ShimDescriptors, CopiesFollowDupFamily) {
  const int fd = node();
  ASSERT_GE(fd, 0);
  const int a = ::fcntl(fd, F_DUPFD_CLOEXEC, 100);
  ASSERT_GE(a, 100);
  EXPECT_TRUE(is_device(a));
  const int b = ::dup3(fd, 150, O_CLOEXEC);
  ASSERT_EQ(b, 150);
  EXPECT_TRUE(is_device(b));
  // dup2 of an ordinary file over a device copy makes it that file (the copy is closed).
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  ASSERT_GE(devnull, 0);
  ASSERT_EQ(::dup2(devnull, b), b);
  EXPECT_FALSE(is_device(b));
  struct stat st {};
  ASSERT_EQ(::fstat(b, &st), 0);
  EXPECT_EQ(st.st_rdev, makedev(1, 3)) << "fstat of the new /dev/null copy";
  // dup2 of a device copy onto it again.
  ASSERT_EQ(::dup2(a, b), b);
  EXPECT_TRUE(is_device(b));
  for (int d : {fd, a, b, devnull}) ::close(d);
  drm_npu_get_param g{};
  EXPECT_EQ(::ioctl(a, DRM_IOCTL_NPU_GET_PARAM, &g), -1);
  EXPECT_EQ(errno, EBADF);
}

TEST(ShimPassThrough, OtherDescriptorsAndPathsAreUntouched) {
  // A pipe's ioctl.
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  ASSERT_EQ(::write(p[1], "abc", 3), 3);
  int ready = 0;
  ASSERT_EQ(::ioctl(p[0], FIONREAD, &ready), 0);
  EXPECT_EQ(ready, 3);
  // A DRM request on a pipe is the kernel's answer, not the driver's.
  drm_npu_get_param g{};
  EXPECT_EQ(::ioctl(p[0], DRM_IOCTL_NPU_GET_PARAM, &g), -1);
  EXPECT_EQ(errno, ENOTTY);
  ::close(p[0]);
  ::close(p[1]);
  // An ordinary file: openat, write, mmap, stat.
  char path[] = "/tmp/npu-shim-test.XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "hello shim", 10), 10);
  const int again = ::openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(again, 0);
  void* m = ::mmap(nullptr, 10, PROT_READ, MAP_PRIVATE, again, 0);
  ASSERT_NE(m, MAP_FAILED) << std::strerror(errno);
  EXPECT_EQ(std::memcmp(m, "hello shim", 10), 0);
  ::munmap(m, 10);
  struct stat st {};
  ASSERT_EQ(::fstat(again, &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_size, 10);
  ::close(again);
  ::close(fd);
  ::unlink(path);
  // Other device paths.
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  DIR* d = ::opendir("/dev");
  ASSERT_NE(d, nullptr);
  ::closedir(d);
  EXPECT_EQ(::access("/sys/class/accel-not-ours", F_OK), -1);
}

TEST(ShimDlopen, ALoadedLibraryReachesTheNode) {
  void* lib = ::dlopen(SHIM_TEST_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << ::dlerror();
  using Probe = int (*)(const char*);
  auto probe = reinterpret_cast<Probe>(::dlsym(lib, "npu_plugin_api_version"));
  ASSERT_NE(probe, nullptr);
  const int v = probe(kNode);
  EXPECT_EQ(v, (DRM_NPU_API_VERSION_MAJOR << 16) | DRM_NPU_API_VERSION_MINOR) << "errno " << -v;
  ::dlclose(lib);
}

// Many threads open their own files and run jobs at once; every output is checked.
TEST(ShimThreads, OpenAndSubmitConcurrently) {
  constexpr int kThreads = 8;
  constexpr int kJobs = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const int fd = node();
      if (fd < 0) {
        ++failures;
        return;
      }
      auto create = [&](uint64_t size, drm_npu_bo_create& c, drm_npu_bo_info& i) {
        c = {};
        c.size = size;
        i = {};
        if (::ioctl(fd, DRM_IOCTL_NPU_BO_CREATE, &c) != 0) return false;
        i.handle = c.handle;
        return ::ioctl(fd, DRM_IOCTL_NPU_BO_INFO, &i) == 0;
      };
      drm_npu_bo_create cs, cd, cc;
      drm_npu_bo_info is, id, ic;
      if (!create(4096, cs, is) || !create(4096, cd, id)) {
        ++failures;
        ::close(fd);
        return;
      }
      auto* src = static_cast<uint8_t*>(::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
                                               fd, static_cast<off_t>(is.mmap_offset)));
      auto* dst = static_cast<uint8_t*>(::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
                                               fd, static_cast<off_t>(id.mmap_offset)));
      npu::isa::CommandBufferBuilder b;
      b.dma_load({.dram = cs.device_addr, .sram = 0, .elem_size = 1, .size = {512, 1, 1}});
      b.sem_signal(NPU_ENGINE_DMA_IN, 0);
      b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
      b.dma_store({.dram = cd.device_addr, .sram = 0, .elem_size = 1, .size = {512, 1, 1}});
      const std::vector<std::byte> bytes = b.finish();
      if (src == MAP_FAILED || dst == MAP_FAILED || !create(bytes.size(), cc, ic)) {
        ++failures;
        ::close(fd);
        return;
      }
      void* cmd = ::mmap(nullptr, ic.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                         static_cast<off_t>(ic.mmap_offset));
      std::memcpy(cmd, bytes.data(), bytes.size());
      drm_npu_ctx_create ctx{};
      ::ioctl(fd, DRM_IOCTL_NPU_CTX_CREATE, &ctx);
      for (int j = 0; j < kJobs; ++j) {
        for (int k = 0; k < 512; ++k) src[k] = static_cast<uint8_t>(t * 31 + j * 7 + k);
        drm_npu_bo_ref refs[3] = {{cc.handle, DRM_NPU_ACCESS_READ},
                                  {cs.handle, DRM_NPU_ACCESS_READ},
                                  {cd.handle, DRM_NPU_ACCESS_WRITE}};
        drm_npu_submit s{};
        s.ctx_id = ctx.ctx_id;
        s.cmd_handle = cc.handle;
        s.bo_count = 3;
        s.cmd_size = bytes.size();
        s.bos = reinterpret_cast<uintptr_t>(refs);
        drm_npu_wait w{};
        w.ctx_id = ctx.ctx_id;
        if (::ioctl(fd, DRM_IOCTL_NPU_SUBMIT, &s) != 0) {
          ++failures;
          break;
        }
        w.seqno = s.seqno;
        w.timeout_ns = deadline_ms(30'000);
        if (::ioctl(fd, DRM_IOCTL_NPU_WAIT, &w) != 0 || w.status != DRM_NPU_JOB_OK ||
            std::memcmp(src, dst, 512) != 0) {
          ++failures;
          break;
        }
      }
      ::munmap(cmd, ic.size);
      ::munmap(src, 4096);
      ::munmap(dst, 4096);
      ::close(fd);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace

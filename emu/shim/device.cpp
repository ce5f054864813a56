// The shim's two devices (device.h): EmuDevice (the process's own mock kernel driver) and
// DaemonDevice (npu-daemon), their files, and the choice between them.
#include "device.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include "no_destructor.h"
#include "npu/daemon_channel.h"
#include "npu/emu/emulator_kernel.h"
#include "npu/emu/kmd.h"
#include "real_libc.h"

namespace npu::shim {
namespace {

constexpr uint64_t kPopulateLimit = 256ull << 20;  // as the driver's own mappings

constinit std::atomic<uint64_t> g_generation{0};

/// What a forked child must never destroy (the parent's objects, whose threads and locks did
/// not come along): kept here for the life of the process.
std::vector<std::shared_ptr<void>>& graveyard() {
  static NoDestructor<std::vector<std::shared_ptr<void>>> g;
  return *g;
}

ino_t inode_of(int fd) {
  struct stat st {};
  return real().fstat(fd, &st) == 0 ? st.st_ino : 0;
}

void warn_once(std::atomic<bool>& said, const char* fmt, const char* arg) {
  if (!said.exchange(true)) std::fprintf(stderr, fmt, arg);
}

// ---------------------------------------------------------------------------------------------
// In process.

class EmuDevice;

class EmuFile final : public OpenFile {
 public:
  EmuFile(EmuDevice& dev, std::shared_ptr<emu::Kmd> kmd, int kfd, int peer, ino_t ino)
      : dev_(dev),
        kmd_(std::move(kmd)),
        kfd_(kfd),
        peer_(peer),
        ino_(ino),
        gen_(g_generation.load()) {}
  ~EmuFile() override;

  int ioctl(int /*fd*/, unsigned long request, void* arg) override {
    if (!alive()) return -1;
    return kmd_->ioctl(kfd_, request, arg);
  }
  void* mmap(int /*fd*/, void* addr, size_t length, int prot, int flags, off_t offset) override {
    if (!alive()) return MAP_FAILED;
    return kmd_->mmap(addr, length, prot, flags, kfd_, offset);
  }
  void forked() override {
    if (kmd_ != nullptr) graveyard().push_back(kmd_);  // its threads stayed in the parent
  }
  ino_t ino() const { return ino_; }

 private:
  bool alive() const {
    if (gen_ == g_generation.load(std::memory_order_relaxed)) return true;
    static std::atomic<bool> said{false};
    warn_once(said,
              "npu-shim: %s: an in-process device does not survive fork(); the child's inherited "
              "descriptor answers ENODEV (open the node again for a device of the child's own, "
              "or run npu-shim --device unix:PATH to share one device across fork)\n",
              kNodeName);
    errno = ENODEV;
    return false;
  }
  static constexpr const char* kNodeName = "/dev/accel/accel0";

  EmuDevice& dev_;
  std::shared_ptr<emu::Kmd> kmd_;
  const int kfd_;
  const int peer_;
  const ino_t ino_;
  const uint64_t gen_;
};

class EmuDevice final : public ShimDevice {
 public:
  EmuDevice(std::string spec, isa::DeviceConfig cfg)
      : spec_(std::move(spec)), cfg_(std::move(cfg)) {}

  const std::string& spec() const override { return spec_; }

  Expected<Opened> open(bool cloexec) override {
    reap();
    std::shared_ptr<emu::Kmd> kmd = current_kmd();
    const int kfd = kmd->open();
    if (kfd < 0) return make_error(errno, "open: the driver refused a new file");
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      const int err = errno;
      kmd->close(kfd);
      return make_error(err, "open: socketpair");
    }
    if (!cloexec) real().fcntl(sv[0], F_SETFD, 0);
    auto file = std::make_shared<EmuFile>(*this, kmd, kfd, sv[1], inode_of(sv[0]));
    {
      std::lock_guard lk(mu_);
      std::erase_if(live_, [](const auto& w) { return w.expired(); });
      live_.push_back(file);
    }
    return Opened{sv[0], std::move(file)};
  }

  std::shared_ptr<OpenFile> adopt(int fd) override {
    const ino_t ino = inode_of(fd);
    std::lock_guard lk(mu_);
    for (const auto& w : live_) {
      if (auto f = w.lock(); f != nullptr && f->ino() == ino) return f;
    }
    return nullptr;
  }

  /// The file's last descriptor in this process is gone: close the driver file now if no
  /// other process holds the program's end, else when reap() sees the hang-up.
  void release(std::shared_ptr<emu::Kmd> kmd, int kfd, int peer) {
    if (!hung_up(peer)) {
      std::lock_guard lk(mu_);
      pending_.push_back({std::move(kmd), kfd, peer});
      return;
    }
    kmd->close(kfd);  // jobs aborted or drained, BOs freed: the kernel's release
    real().close(peer);
  }

  void reap() override {
    std::vector<Pending> done;
    {
      std::lock_guard lk(mu_);
      if (pending_.empty()) return;
      std::erase_if(pending_, [&](Pending& p) {
        if (!hung_up(p.peer)) return false;
        done.push_back(std::move(p));
        return true;
      });
    }
    for (Pending& p : done) {
      p.kmd->close(p.kfd);
      real().close(p.peer);
    }
  }

  void forked() override {
    // The driver's threads are the parent's: abandon it; the child's next open makes its own.
    if (kmd_ != nullptr) graveyard().push_back(std::exchange(kmd_, nullptr));
    for (Pending& p : pending_) graveyard().push_back(p.kmd);
    pending_.clear();
    new (&mu_) std::mutex;  // another thread of the parent may have held it
  }

 private:
  struct Pending {
    std::shared_ptr<emu::Kmd> kmd;
    int kfd;
    int peer;
  };

  static bool hung_up(int peer) {
    pollfd p{peer, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) != 0;
  }

  std::shared_ptr<emu::Kmd> current_kmd() {
    std::lock_guard lk(mu_);
    if (kmd_ == nullptr) {
      kmd_ = std::make_shared<emu::Kmd>(cfg_, emu::Kmd::Options{.checked_user_access = true});
    }
    return kmd_;
  }

  const std::string spec_;
  const isa::DeviceConfig cfg_;
  std::mutex mu_;
  std::shared_ptr<emu::Kmd> kmd_;
  std::vector<Pending> pending_;
  std::vector<std::weak_ptr<EmuFile>> live_;
};

EmuFile::~EmuFile() {
  if (gen_ == g_generation.load()) dev_.release(std::move(kmd_), kfd_, peer_);
}

// ---------------------------------------------------------------------------------------------
// Through npu-daemon.

class DaemonDevice;

class DaemonFile final : public OpenFile {
 public:
  DaemonFile(const std::string& path, std::shared_ptr<DaemonChannel> ch)
      : path_(path), ch_(std::move(ch)), gen_(g_generation.load()) {}

  int ioctl(int fd, unsigned long request, void* arg) override {
    DaemonChannel* ch = channel(fd);
    return ch == nullptr ? -1 : ch->ioctl(request, arg);
  }

  void* mmap(int fd, void* addr, size_t length, int prot, int flags, off_t offset) override {
    DaemonChannel* ch = channel(fd);
    if (ch == nullptr) return MAP_FAILED;
    auto memfd = ch->map(static_cast<uint64_t>(offset), length, flags);
    if (!memfd) {
      errno = memfd.error().code;
      return MAP_FAILED;
    }
    const int populate = length <= kPopulateLimit ? MAP_POPULATE : 0;
    return real().mmap(addr, length, prot, flags | populate, memfd->get(), 0);
  }

  void forked() override {
    if (ch_ == nullptr) return;
    // The child's copy of the parent's channel socket is no descriptor of the program's:
    // close it, so the file's life in the daemon depends on the program's copies alone; the
    // object itself (locks other parent threads may hold) is never destroyed.
    real().close(ch_->fd());
    graveyard().push_back(std::exchange(ch_, nullptr));
    new (&mu_) std::mutex;
  }

 private:
  // This process's channel to the file: the one made at open, or in a forked child one
  // attached on first use through the inherited descriptor `fd`.
  DaemonChannel* channel(int fd) {
    const uint64_t now = g_generation.load(std::memory_order_acquire);
    if (gen_.load(std::memory_order_acquire) == now) return ch_.get();
    std::lock_guard lk(mu_);
    if (gen_.load(std::memory_order_relaxed) != now) {
      auto ch = DaemonChannel::attach(path_, fd);
      if (!ch) {
        std::fprintf(stderr, "npu-shim: attaching the inherited descriptor %d: %s\n", fd,
                     ch.error().message.c_str());
        errno = ch.error().code == ENOENT ? EBADF : EIO;
        return nullptr;
      }
      ch_ = std::move(*ch);
      gen_.store(now, std::memory_order_release);
    }
    return ch_.get();
  }

  const std::string path_;
  std::mutex mu_;
  std::shared_ptr<DaemonChannel> ch_;
  std::atomic<uint64_t> gen_;
};

class DaemonDevice final : public ShimDevice {
 public:
  DaemonDevice(std::string spec, std::string path)
      : spec_(std::move(spec)), path_(std::move(path)) {}

  const std::string& spec() const override { return spec_; }

  Expected<Opened> open(bool cloexec) override {
    auto ch = DaemonChannel::connect(path_, /*shareable=*/true);
    if (!ch) return ch.error();
    const int fd = real().fcntl((*ch)->fd(), cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
    if (fd < 0) return make_error(errno, "open: dup of the daemon socket");
    return Opened{fd, std::make_shared<DaemonFile>(path_, std::move(*ch))};
  }

  std::shared_ptr<OpenFile> adopt(int fd) override {
    struct stat st {};
    if (real().fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return nullptr;
    {
      std::lock_guard lk(mu_);
      if (not_ours_.count(st.st_ino) != 0) return nullptr;
    }
    auto ch = DaemonChannel::attach(path_, fd);
    if (!ch) {
      std::lock_guard lk(mu_);
      not_ours_.insert(st.st_ino);
      return nullptr;
    }
    return std::make_shared<DaemonFile>(path_, std::move(*ch));
  }

  void forked() override { new (&mu_) std::mutex; }

 private:
  const std::string spec_;
  const std::string path_;
  std::mutex mu_;
  std::set<ino_t> not_ours_;  // sockets an ATTACH was refused for
};

// ---------------------------------------------------------------------------------------------
// A device string the shim cannot use: every open fails (the reason was printed once).

class NoDevice final : public ShimDevice {
 public:
  explicit NoDevice(std::string spec) : spec_(std::move(spec)) {}
  const std::string& spec() const override { return spec_; }
  Expected<Opened> open(bool) override { return make_error(ENODEV, "no usable device"); }
  std::shared_ptr<OpenFile> adopt(int) override { return nullptr; }

 private:
  const std::string spec_;
};

std::string configured_spec() {
  // NOLINTBEGIN(concurrency-mt-unsafe): read once, at the first open
  if (const char* s = std::getenv("NPU_SHIM_DEVICE"); s != nullptr && *s != '\0') return s;
  if (const char* s = std::getenv("NPU_DEVICE"); s != nullptr) {
    const std::string_view v(s);
    if (v == "emu" || v.starts_with("emu:") || v.starts_with("unix:")) return s;
  }
  // NOLINTEND(concurrency-mt-unsafe)
  return "emu:";
}

std::unique_ptr<ShimDevice> make_device() {
  const std::string spec = configured_spec();
  if (spec.starts_with("unix:") && spec.size() > 5) {
    return std::make_unique<DaemonDevice>(spec, spec.substr(5));
  }
  auto cfg = emu::emu_device_config(spec);
  if (!cfg) {
    std::fprintf(stderr, "npu-shim: %s\n", cfg.error().message.c_str());
    return std::make_unique<NoDevice>(spec);
  }
  return std::make_unique<EmuDevice>(spec, std::move(*cfg));
}

constinit std::atomic<ShimDevice*> g_device{nullptr};

}  // namespace

uint64_t fork_generation() {
  return g_generation.load(std::memory_order_relaxed);
}

ShimDevice& ShimDevice::get() {
  static NoDestructor<std::unique_ptr<ShimDevice>> device(make_device());
  g_device.store(device->get(), std::memory_order_release);
  return **device;
}

namespace detail {

/// The atfork child handler's part for the devices (hooks.cpp): a new generation, and the
/// device (if one was made) let go of the parent's.
void device_forked() {
  g_generation.fetch_add(1);
  if (ShimDevice* d = g_device.load(std::memory_order_acquire)) d->forked();
}

}  // namespace detail

}  // namespace npu::shim

// daemon_soak: many tenants against one npu-daemon for a while (issue 30). `make soak` runs it
// for minutes; `make test` for a few seconds (ctest daemon.soak).
//
//   daemon_soak [--seconds N] [--clients K] [--seed S]
//
// The parent serves a device in-process (a ServerThread: small per-client quotas, a short time
// slice so jobs of equal priority take turns at safe points) and keeps K client processes
// running: each is this program again (`--client`), exec'ed fresh, dying with the parent
// (PR_SET_PDEATHSIG). A client, from its seed, creates contexts of random priorities, BOs of
// random sizes and batches of random jobs (copies through SRAM in segments separated by safe
// points), and checks every answer: each job's bytes, EDQUOT exactly when a limit is passed,
// EPERM for REALTIME exactly when the driver says it is not allowed (QUERY QUOTA). Some clients
// drop CAP_SYS_NICE first; the parent SIGKILLs some mid-way.
// At the end every client is accounted for (exited 0, or killed by the parent), the daemon has
// no client left, its BO memory is back to where it started, and its counters say no job was
// lost or duplicated: submitted = completed + faulted + aborted, none in flight.
// Exit status 0 when all of that holds; 1 with one line per problem otherwise.
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "npu/daemon/server_thread.h"
#include "npu/emu/kmd.h"
#include "npu/isa/builder.h"
#include "npu/test/capabilities.h"
#include "npu/unix_kernel.h"
#include "npu_accel.h"

namespace {

using Clock = std::chrono::steady_clock;

int64_t deadline_ns(int64_t ms) {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec + ms * 1'000'000;
}

// ---- A client ---------------------------------------------------------------------------

[[noreturn]] void client_fail(const std::string& what) {
  std::fprintf(stderr, "daemon_soak: client %d: %s\n", ::getpid(), what.c_str());
  std::fflush(stderr);
  ::_exit(1);
}

struct Bo {
  uint32_t handle = 0;
  uint64_t va = 0, size = 0;
  std::byte* map = nullptr;
};

class Tenant {
 public:
  Tenant(const std::string& socket, uint64_t seed) : k_(socket), rng_(seed) {
    fd_ = k_.open(socket);
    if (fd_ < 0) client_fail(std::string("open: ") + std::strerror(errno));
    q_ = quota();
  }

  int io(unsigned long request, void* arg) { return k_.ioctl(fd_, request, arg) == 0 ? 0 : errno; }

  drm_npu_quota quota() {
    drm_npu_quota q{};
    drm_npu_query qu{};
    qu.type = DRM_NPU_QUERY_QUOTA;
    qu.size = sizeof(q);
    qu.data = reinterpret_cast<uintptr_t>(&q);
    if (const int r = io(DRM_IOCTL_NPU_QUERY, &qu); r != 0) client_fail("QUERY QUOTA: " + err(r));
    return q;
  }

  static std::string err(int e) { return std::strerror(e); }
  uint32_t pick(uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng_);
  }

  void new_context() {
    drm_npu_ctx_create c{};
    c.priority = pick(DRM_NPU_PRIORITY_LOW, DRM_NPU_PRIORITY_REALTIME);
    const int r = io(DRM_IOCTL_NPU_CTX_CREATE, &c);
    const bool allowed =
        c.priority != DRM_NPU_PRIORITY_REALTIME || (q_.flags & DRM_NPU_QUOTA_REALTIME) != 0;
    const bool full = ctxs_.size() >= q_.contexts_limit;
    const int want = !allowed ? EPERM : full ? EDQUOT : 0;
    if (r != want) {
      client_fail("CTX_CREATE priority " + std::to_string(c.priority) + ": got " + err(r) +
                  ", expected " + (want ? err(want) : "success"));
    }
    if (r == 0) ctxs_.push_back(c.ctx_id);
  }

  /// A BO of `size`; nullopt on an expected EDQUOT.
  std::optional<Bo> new_bo(uint64_t size) {
    drm_npu_bo_create c{};
    c.size = size;
    const int r = io(DRM_IOCTL_NPU_BO_CREATE, &c);
    const uint64_t rounded = (size + 4095) / 4096 * 4096;
    const bool over = held_ + rounded > q_.bo_memory_limit;
    if (r == EDQUOT && over) return std::nullopt;
    if (r != 0 || over) {
      client_fail("BO_CREATE " + std::to_string(size) + " with " + std::to_string(held_) +
                  " held of " + std::to_string(q_.bo_memory_limit) + ": got " + err(r));
    }
    drm_npu_bo_info i{};
    i.handle = c.handle;
    if (const int e = io(DRM_IOCTL_NPU_BO_INFO, &i); e != 0) client_fail("BO_INFO: " + err(e));
    void* p = k_.mmap(nullptr, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                      static_cast<off_t>(i.mmap_offset));
    if (p == MAP_FAILED) client_fail("mmap: " + err(errno));
    held_ += i.size;
    return Bo{c.handle, c.device_addr, i.size, static_cast<std::byte*>(p)};
  }

  void close_bo(const Bo& b) {
    k_.munmap(b.map, b.size);
    drm_npu_bo_close c{};
    c.handle = b.handle;
    if (const int e = io(DRM_IOCTL_NPU_BO_CLOSE, &c); e != 0) client_fail("BO_CLOSE: " + err(e));
    held_ -= b.size;
  }

  /// One batch of jobs on random contexts, each copying random bytes in segments through SRAM
  /// with safe points between them; waits for all and checks every byte.
  void batch() {
    if (ctxs_.empty()) return;
    struct Pending {
      uint32_t ctx;
      uint64_t seqno;
      Bo src, dst, cmd;
    };
    std::vector<Pending> pending;
    const uint32_t jobs = pick(1, q_.jobs_in_flight_limit + 2);
    for (uint32_t j = 0; j < jobs; ++j) {
      const uint32_t segments = pick(1, 6);
      const uint32_t chunk = pick(1, 16) * 4096;
      auto src = new_bo(uint64_t{segments} * chunk);
      auto dst = src ? new_bo(uint64_t{segments} * chunk) : std::nullopt;
      npu::isa::CommandBufferBuilder b;
      for (uint32_t k = 0; k < segments && dst; ++k) {
        if (k > 0) b.safe_point();
        const uint64_t off = uint64_t{k} * chunk;
        b.dma_load({.dram = src->va + off, .sram = 0, .elem_size = 1, .size = {chunk, 1, 1}});
        b.sem_signal(NPU_ENGINE_DMA_IN, 0);
        b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
        b.dma_store({.dram = dst->va + off, .sram = 0, .elem_size = 1, .size = {chunk, 1, 1}});
      }
      const auto bytes = b.finish();
      auto cmd = dst ? new_bo(bytes.size()) : std::nullopt;
      if (!cmd) {  // over the BO quota: give back what this job got and stop the batch
        if (dst) close_bo(*dst);
        if (src) close_bo(*src);
        break;
      }
      for (uint64_t i = 0; i < src->size; ++i) src->map[i] = std::byte(rng_() & 0xff);
      std::memcpy(cmd->map, bytes.data(), bytes.size());
      std::vector<drm_npu_bo_ref> refs{{cmd->handle, DRM_NPU_ACCESS_READ},
                                       {src->handle, DRM_NPU_ACCESS_READ},
                                       {dst->handle, DRM_NPU_ACCESS_WRITE}};
      drm_npu_submit s{};
      s.ctx_id = ctxs_[pick(0, static_cast<uint32_t>(ctxs_.size() - 1))];
      s.cmd_handle = cmd->handle;
      s.cmd_size = bytes.size();
      s.bo_count = static_cast<uint32_t>(refs.size());
      s.bos = reinterpret_cast<uintptr_t>(refs.data());
      const int r = io(DRM_IOCTL_NPU_SUBMIT, &s);
      if (r == EDQUOT && pending.size() >= q_.jobs_in_flight_limit) {
        close_bo(*cmd);
        close_bo(*dst);
        close_bo(*src);
        break;
      }
      if (r != 0) {
        client_fail("SUBMIT with " + std::to_string(pending.size()) + " pending of " +
                    std::to_string(q_.jobs_in_flight_limit) + ": " + err(r));
      }
      if (last_seqno_[s.ctx_id] + 1 != s.seqno) client_fail("seqno not one after the last");
      last_seqno_[s.ctx_id] = s.seqno;
      ++submitted_;
      pending.push_back({s.ctx_id, s.seqno, *src, *dst, *cmd});
    }
    for (const Pending& p : pending) {
      drm_npu_wait w{};
      w.ctx_id = p.ctx;
      w.seqno = p.seqno;
      w.timeout_ns = deadline_ns(60'000);
      if (const int r = io(DRM_IOCTL_NPU_WAIT, &w); r != 0) client_fail("WAIT: " + err(r));
      if (w.status != DRM_NPU_JOB_OK) client_fail("job status " + std::to_string(w.status));
      if (std::memcmp(p.src.map, p.dst.map, p.src.size) != 0) client_fail("wrong bytes");
      close_bo(p.cmd);
      close_bo(p.dst);
      close_bo(p.src);
    }
  }

  void run(Clock::time_point until) {
    new_context();
    while (Clock::now() < until) {
      switch (pick(0, 5)) {
        case 0:
          new_context();
          break;
        case 1: {  // a BO far past the quota now and then, then one that fits
          if (auto b = new_bo(pick(0, 3) == 0 ? q_.bo_memory_limit + 4096 : 4096)) close_bo(*b);
          break;
        }
        default:
          batch();
      }
    }
    const drm_npu_quota q = quota();
    if (q.jobs_in_flight != 0 || q.bo_memory != held_) {
      client_fail("QUERY QUOTA at the end: " + std::to_string(q.jobs_in_flight) +
                  " jobs in flight, " + std::to_string(q.bo_memory) + " bytes held, expected " +
                  std::to_string(held_));
    }
  }

 private:
  npu::UnixKernel k_;
  int fd_ = -1;
  std::mt19937_64 rng_;
  drm_npu_quota q_{};
  std::vector<uint32_t> ctxs_;
  std::map<uint32_t, uint64_t> last_seqno_;
  uint64_t held_ = 0;
  uint64_t submitted_ = 0;
};

int client_main(const std::string& socket, uint64_t seed, int64_t ms) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 1;                            // the parent died before prctl
  std::optional<npu::test::WithoutCapSysNice> unprivileged;  // odd seeds: REALTIME refused
  if (seed % 2 == 1) unprivileged.emplace();
  Tenant t(socket, seed);
  t.run(Clock::now() + std::chrono::milliseconds(ms));
  return 0;
}

// ---- The parent --------------------------------------------------------------------------

struct Child {
  pid_t pid;
  bool killed = false;
};

pid_t spawn(const char* self, const std::string& socket, uint64_t seed, int64_t ms) {
  const std::string s = std::to_string(seed), m = std::to_string(ms);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(self, self, "--client", socket.c_str(), s.c_str(), m.c_str(), nullptr);
    ::_exit(127);
  }
  return pid;
}

int parent_main(const char* self, int seconds, int clients, uint64_t seed) {
  // Quota hits and refusals are the point here: the daemon's warnings for them would be noise.
  ::setenv("NPU_LOG_LEVEL", "error", /*overwrite=*/0);
  npu::isa::DeviceConfig cfg;
  cfg.watchdog_ms = 5000;
  cfg.scheduling.time_slice_cycles = 20'000;
  cfg.quota.bo_memory = 4u << 20;
  cfg.quota.contexts = 4;
  cfg.quota.jobs_in_flight = 6;
  auto server = npu::daemon::ServerThread::start(cfg);
  if (!server) {
    std::fprintf(stderr, "daemon_soak: %s\n", server.error().message.c_str());
    return 1;
  }
  npu::emu::Kmd& kmd = (*server)->server().kmd();
  const std::string socket = (*server)->socket_path();
  const uint64_t memory_at_start = kmd.device_bo_memory();

  std::mt19937_64 rng(seed);
  std::map<pid_t, Child> running;
  std::vector<std::string> problems;
  uint64_t spawned = 0, exited_ok = 0, killed = 0;
  auto reap = [&](bool block) {
    for (;;) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, block ? 0 : WNOHANG);
      if (pid <= 0) return;
      auto it = running.find(pid);
      if (it == running.end()) continue;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        ++exited_ok;
      } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && it->second.killed) {
        ++killed;
      } else {
        problems.push_back("client " + std::to_string(pid) + " ended with status " +
                           std::to_string(status));
      }
      running.erase(it);
      if (block) return;
    }
  };

  const auto end = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < end) {
    reap(false);
    while (static_cast<int>(running.size()) < clients) {
      const int64_t ms = std::uniform_int_distribution<int64_t>(300, 2500)(rng);
      const pid_t pid = spawn(self, socket, rng(), ms);
      if (pid < 0) {
        problems.push_back(std::string("fork: ") + std::strerror(errno));
        break;
      }
      running.emplace(pid, Child{pid});
      ++spawned;
    }
    if (!running.empty() && std::uniform_int_distribution<int>(0, 19)(rng) == 0) {
      auto it = std::next(running.begin(),
                          std::uniform_int_distribution<long>(0, running.size() - 1)(rng));
      it->second.killed = true;
      ::kill(it->first, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!problems.empty()) break;
  }
  // The clients still running finish on their own (each has at most a few seconds left);
  // one that does not within a minute is a hang.
  const auto give_up = Clock::now() + std::chrono::seconds(60);
  while (!running.empty() && Clock::now() < give_up) {
    reap(false);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (auto& [pid, c] : running) {
    problems.push_back("client " + std::to_string(pid) + " still running a minute after the end");
    ::kill(pid, SIGKILL);
  }
  while (!running.empty()) reap(true);

  // The daemon cleans up a closed client asynchronously: wait (bounded) for it to settle.
  npu::UnixKernel k(socket);
  const int fd = k.open(socket);
  drm_npu_counters c{};
  bool settled = false;
  for (int i = 0; i < 1000 && !settled; ++i) {
    auto st = k.status(fd);
    drm_npu_query q{};
    q.type = DRM_NPU_QUERY_COUNTERS;
    q.size = sizeof(c);
    q.data = reinterpret_cast<uintptr_t>(&c);
    settled = st && st->clients.size() == 1 && k.ioctl(fd, DRM_IOCTL_NPU_QUERY, &q) == 0 &&
              kmd.device_bo_memory() == memory_at_start &&
              c.jobs_submitted == c.jobs_completed + c.jobs_faulted + c.jobs_aborted;
    if (!settled) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!settled) {
    problems.push_back(
        "the daemon did not settle: device BO memory " + std::to_string(kmd.device_bo_memory()) +
        " (at the start " + std::to_string(memory_at_start) + "), jobs submitted " +
        std::to_string(c.jobs_submitted) + " vs completed " + std::to_string(c.jobs_completed) +
        " + faulted " + std::to_string(c.jobs_faulted) + " + aborted " +
        std::to_string(c.jobs_aborted));
  }
  if (c.jobs_faulted != 0) problems.push_back(std::to_string(c.jobs_faulted) + " jobs faulted");
  k.close(fd);

  std::printf(
      "daemon_soak: %d s, %llu clients (%llu finished, %llu killed); %llu jobs (%llu completed, "
      "%llu aborted by kills), %llu preemptions\n",
      seconds, static_cast<unsigned long long>(spawned), static_cast<unsigned long long>(exited_ok),
      static_cast<unsigned long long>(killed), static_cast<unsigned long long>(c.jobs_submitted),
      static_cast<unsigned long long>(c.jobs_completed),
      static_cast<unsigned long long>(c.jobs_aborted),
      static_cast<unsigned long long>(c.preemptions));
  for (const std::string& p : problems) std::fprintf(stderr, "daemon_soak: %s\n", p.c_str());
  if (spawned == 0 || exited_ok == 0) {
    std::fprintf(stderr, "daemon_soak: no client finished\n");
    return 1;
  }
  return problems.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--client") {
    return client_main(argv[2], std::strtoull(argv[3], nullptr, 10),
                       std::strtoll(argv[4], nullptr, 10));
  }
  int seconds = 10, clients = 4;
  uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--seconds") {
      seconds = std::atoi(argv[i + 1]);
    } else if (a == "--clients") {
      clients = std::atoi(argv[i + 1]);
    } else if (a == "--seed") {
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      std::fprintf(stderr, "daemon_soak: unknown option '%s'\n", a.c_str());
      return 2;
    }
  }
  if ((argc - 1) % 2 != 0 || seconds < 1 || clients < 1) {
    std::fprintf(stderr, "usage: daemon_soak [--seconds N] [--clients K] [--seed S]\n");
    return 2;
  }
  return parent_main("/proc/self/exe", seconds, clients, seed);
}

// run_under_shim() and friends (npu/shim/launch.h).
#include "npu/shim/launch.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "npu/daemon_channel.h"
#include "npu/emu/emulator_kernel.h"

namespace npu::shim {
namespace {

namespace fs = std::filesystem;

std::atomic<pid_t> g_child{0};

extern "C" void forward_signal(int sig) {
  const pid_t child = g_child.load();
  if (child > 0) ::kill(child, sig);
}

std::string getenv_or(const char* name, const char* fallback = "") {
  const char* v = std::getenv(name);  // NOLINT(concurrency-mt-unsafe): single-threaded tool
  return v != nullptr ? std::string(v) : std::string(fallback);
}

Expected<void> check_device(const std::string& device) {
  if (device.starts_with("unix:")) {
    auto ch = DaemonChannel::connect(device.substr(5));
    if (!ch) {
      return make_error(ch.error().code, fmt::format("device '{}': {} (is npu-daemon serving it?)",
                                                     device, ch.error().message));
    }
    return ok();
  }
  auto cfg = emu::emu_device_config(device);
  if (!cfg) return cfg.error();
  return ok();
}

}  // namespace

std::string resolve_device(const std::string& requested) {
  if (!requested.empty()) return requested;
  const std::string env = getenv_or("NPU_DEVICE");
  // NPU_DEVICE=drm:... is meant for the program (libnpu on the node), not for the shim.
  if (env == "emu" || env.starts_with("emu:") || env.starts_with("unix:")) return env;
  return "emu:";
}

Expected<std::string> find_shim_library() {
  std::vector<std::string> candidates;
  if (std::string env = getenv_or("NPU_SHIM_LIBRARY"); !env.empty()) candidates.push_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(
        (exe.parent_path() / NPU_SHIM_RELATIVE_LIBDIR / "libnpu-shim.so").string());
  }
  candidates.emplace_back(NPU_SHIM_BUILD_PATH);
  for (const std::string& c : candidates) {
    if (::access(c.c_str(), R_OK) == 0) return fs::weakly_canonical(c, ec).string();
  }
  std::string tried;
  for (const std::string& c : candidates) tried += (tried.empty() ? "" : ", ") + c;
  return make_error(ENOENT, fmt::format("libnpu-shim.so not found (looked at {}; set "
                                        "NPU_SHIM_LIBRARY)",
                                        tried));
}

Expected<int> run_under_shim(const LaunchOptions& options) {
  if (options.argv.empty()) return make_error(EINVAL, "no program to run");
  const std::string device = resolve_device(options.device);
  if (auto c = check_device(device); !c) return c.error();
  std::string library = options.library;
  if (library.empty()) {
    auto found = find_shim_library();
    if (!found) return found.error();
    library = *found;
  }

  std::string root = (fs::temp_directory_path() / "npu-shim.XXXXXX").string();
  if (::mkdtemp(root.data()) == nullptr) {
    return make_error(errno, fmt::format("mkdtemp {}: {}", root, std::strerror(errno)));
  }
  // The sanitizer runtime the shim was built with must come first, or it refuses to start in
  // a program that was not built with it.
  std::string preload = NPU_SHIM_SANITIZER_RUNTIME;
  preload += preload.empty() ? library : ":" + library;
  if (std::string old = getenv_or("LD_PRELOAD"); !old.empty()) preload += ":" + old;

  std::vector<char*> argv;
  for (const std::string& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);

  const pid_t child = ::fork();
  if (child < 0) return make_error(errno, fmt::format("fork: {}", std::strerror(errno)));
  if (child == 0) {
    ::setenv("LD_PRELOAD", preload.c_str(), 1);
    ::setenv("NPU_SHIM_DEVICE", device.c_str(), 1);
    ::setenv("NPU_SHIM_ROOT", root.c_str(), 1);
    ::execvp(argv[0], argv.data());
    const int err = errno;
    const std::string msg = fmt::format("npu-shim: {}: {}\n", options.argv[0], std::strerror(err));
    [[maybe_unused]] const ssize_t w = ::write(2, msg.data(), msg.size());
    ::_exit(127);
  }
  g_child.store(child);
  struct sigaction sa {};
  struct sigaction old_int {
  }, old_term{}, old_hup{};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  ::sigaction(SIGHUP, &sa, &old_hup);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  g_child.store(0);
  std::error_code ec;
  fs::remove_all(root, ec);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace npu::shim

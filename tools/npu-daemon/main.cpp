// npu-daemon: serves one emulated device to many processes over a UNIX socket (docs/daemon.md).
//   npu-daemon [--socket PATH] [--device-config FILE] [--group GROUP] [--allow-realtime USER]
//              [--max-bo-memory BYTES] [--device-bo-memory BYTES] [--max-contexts N]
//              [--max-jobs N] [--no-preemption] [--status]
// Clients select it with NPU_DEVICE=unix:PATH (or a tool's --device unix:PATH). SIGTERM or
// SIGINT shuts it down cleanly (connections closed, socket removed). Logs go to stderr.
#include <grp.h>
#include <pwd.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "npu/daemon/server.h"
#include "npu/daemon/socket_path.h"
#include "npu/isa/device_config.h"
#include "npu/unix_kernel.h"

namespace {

npu::daemon::Server* g_server = nullptr;

extern "C" void on_signal(int /*sig*/) {
  if (g_server != nullptr) g_server->stop();
}

// --status: the clients of a running daemon and the BO memory alive in it.
int print_status(const std::string& path) {
  auto report = npu::daemon_status_report(path);
  if (!report) return npu::tools::fail("npu-daemon", report.error().message);
  std::fputs(report->c_str(), stdout);
  return 0;
}

// A number with an optional binary suffix: 4096, 64K, 512M, 2G.
std::optional<uint64_t> parse_bytes(const std::string& text) {
  size_t used = 0;
  uint64_t v = 0;
  try {
    v = std::stoull(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string suffix = text.substr(used);
  int shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  if (suffix == "M" || suffix == "m") shift = 20;
  if (suffix == "G" || suffix == "g") shift = 30;
  if (shift == 0 && !suffix.empty()) return std::nullopt;
  if (v > (UINT64_MAX >> shift)) return std::nullopt;
  return v << shift;
}

std::optional<gid_t> group_id(const std::string& name) {
  if (const group* g = ::getgrnam(name.c_str())) return g->gr_gid;
  try {
    size_t used = 0;
    const unsigned long v = std::stoul(name, &used);
    if (used == name.size()) return static_cast<gid_t>(v);
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<uid_t> user_id(const std::string& name) {
  if (const passwd* p = ::getpwnam(name.c_str())) return p->pw_uid;
  try {
    size_t used = 0;
    const unsigned long v = std::stoul(name, &used);
    if (used == name.size()) return static_cast<uid_t>(v);
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  CLI::App app{"Serve one emulated NPU device to many processes over a UNIX socket"};
  std::string socket_path = npu::daemon::default_socket_path();
  std::string config_path, group, max_bo, device_bo;
  std::vector<std::string> realtime_users;
  std::optional<uint32_t> max_contexts, max_jobs;
  bool status = false, no_preemption = false;
  app.add_option("--socket", socket_path, "socket path (default: " + socket_path + ")");
  app.add_option("--device-config", config_path, "device-config JSON (default: built-in)");
  app.add_option("--group", group,
                 "create the socket 0660 for this group (name or gid); default: 0600, owner only");
  app.add_option("--allow-realtime", realtime_users,
                 "a user (name or uid) whose clients may create REALTIME contexts without "
                 "CAP_SYS_NICE (repeatable)");
  app.add_option("--max-bo-memory", max_bo,
                 "BO memory one client may hold, bytes with an optional K/M/G suffix (default: "
                 "the device config's quota.bo_memory, else half the machine's memory)");
  app.add_option("--device-bo-memory", device_bo,
                 "BO memory all clients together may hold (default: the device config's "
                 "quota.device_bo_memory, else the machine's memory)");
  app.add_option("--max-contexts", max_contexts, "contexts one client may hold")
      ->check(CLI::Range(1, 1024));
  app.add_option("--max-jobs", max_jobs, "jobs one client may have queued or running")
      ->check(CLI::Range(1, 1 << 20));
  app.add_flag("--no-preemption", no_preemption,
               "run every job to its end once started (no preemption at safe points)");
  app.add_flag("--status", status, "print the clients of the daemon at --socket and exit");
  if (auto s = npu::tools::parse_args(app, argc, argv, "npu-daemon")) return *s;
  if (status) return print_status(socket_path);
  auto fail = [](const std::string& m) { return npu::tools::fail("npu-daemon", m); };

  npu::isa::DeviceConfig cfg;
  if (!config_path.empty()) {
    auto loaded = npu::isa::DeviceConfig::load(config_path);
    if (!loaded) return fail(loaded.error().message);
    cfg = std::move(*loaded);
  }
  if (!max_bo.empty()) {
    const auto v = parse_bytes(max_bo);
    if (!v || *v == 0) return fail("--max-bo-memory '" + max_bo + "': expected bytes, e.g. 2G");
    cfg.quota.bo_memory = *v;
  }
  if (!device_bo.empty()) {
    const auto v = parse_bytes(device_bo);
    if (!v || *v == 0) {
      return fail("--device-bo-memory '" + device_bo + "': expected bytes, e.g. 8G");
    }
    cfg.quota.device_bo_memory = *v;
  }
  if (max_contexts) cfg.quota.contexts = *max_contexts;
  if (max_jobs) cfg.quota.jobs_in_flight = *max_jobs;
  if (no_preemption) cfg.scheduling.preemption = false;

  npu::daemon::ServerOptions options;
  if (!group.empty()) {
    options.group = group_id(group);
    if (!options.group) return fail("--group '" + group + "': no such group");
  }
  for (const std::string& u : realtime_users) {
    const auto uid = user_id(u);
    if (!uid) return fail("--allow-realtime '" + u + "': no such user");
    options.realtime_uids.push_back(*uid);
  }
  auto server = npu::daemon::Server::create(socket_path, std::move(cfg), std::move(options));
  if (!server) return fail(server.error().message);

  g_server = server->get();
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  (*server)->run();
  g_server = nullptr;
  server->reset();
  std::cerr << "npu-daemon: stopped\n";
  return 0;
}

int main(int argc, char** argv) {
  return npu::tools::guarded_main("npu-daemon", [&] { return tool_main(argc, argv); });
}

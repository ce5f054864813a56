// npu-daemon: serves one emulated device to many processes over a UNIX socket (docs/daemon.md).
//   npu-daemon [--socket PATH] [--device-config FILE] [--status]
// Clients select it with NPU_DEVICE=unix:PATH (or a tool's --device unix:PATH). SIGTERM or
// SIGINT shuts it down cleanly (connections closed, socket removed). Logs go to stderr.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

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

}  // namespace

static int tool_main(int argc, char** argv) {
  CLI::App app{"Serve one emulated NPU device to many processes over a UNIX socket"};
  std::string socket_path = npu::daemon::default_socket_path();
  std::string config_path;
  bool status = false;
  app.add_option("--socket", socket_path, "socket path (default: " + socket_path + ")");
  app.add_option("--device-config", config_path, "device-config JSON (default: built-in)");
  app.add_flag("--status", status, "print the clients of the daemon at --socket and exit");
  if (auto s = npu::tools::parse_args(app, argc, argv, "npu-daemon")) return *s;
  if (status) return print_status(socket_path);

  npu::isa::DeviceConfig cfg;
  if (!config_path.empty()) {
    auto loaded = npu::isa::DeviceConfig::load(config_path);
    if (!loaded) return npu::tools::fail("npu-daemon", loaded.error().message);
    cfg = std::move(*loaded);
  }
  auto server = npu::daemon::Server::create(socket_path, std::move(cfg));
  if (!server) return npu::tools::fail("npu-daemon", server.error().message);

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

// onnx_conformance: runs the ONNX backend tests of libonnx-testdata through the compiler and
// the device and compares with the reference outputs (docs/conformance.md).
//
//   onnx_conformance [--data DIR] [--filter SUBSTR]... [--expected-failures FILE] [--list]
//                    [--json FILE] [-j N] [--timeout SEC] [--no-fork] [--host-only] [--device S]
//                    [--racecheck] [--preempted-device S]
//
// Every test runs in a forked child (up to -j at a time) that opens the device itself, so a
// crash or a hang in one test is reported as that test's failure and the run goes on.
// With --racecheck every device segment runs under the synchronization checker: a test whose
// compiled code has a hazard is reported ("RACE name: ...") and fails the run, whether or not
// its outputs match. With --preempted-device every passing test runs again on that device (one
// that preempts every job at every safe point and scrambles SRAM in between) and fails unless its
// outputs are byte-identical and it was preempted at every safe point (docs/isa.md section 10).
// Exit status: 0 when every failure is listed in the expected-failures file, every listed
// test still fails and (--racecheck) no test has a hazard; 1 otherwise; 2 on a usage or I/O
// error.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "conformance.h"

namespace {

namespace fs = std::filesystem;
using npu::conformance::Outcome;
using npu::conformance::Status;
using Clock = std::chrono::steady_clock;

constexpr int kUsageError = 2;

struct Options {
  std::string data = NPU_ONNX_TESTDATA_DIR;
  std::vector<std::string> filters;
  std::string expected_failures, json, device, preempted_device;
  size_t min_passed = 0, min_on_device = 0;
  bool list = false, no_fork = false, host_only = false, racecheck = false;
  int jobs = 1;
  double timeout_s = 120;
};

struct Test {
  std::string name;  // path under --data: "node/test_abs"
  fs::path dir;
  Outcome outcome;
  double seconds = 0;
};

int usage_error(const std::string& message) {
  std::cerr << "onnx_conformance: " << message << "\n";
  return kUsageError;
}

// Every directory holding a model.onnx at depth 1 or 2 under `root` (a suite directory or the
// directory of the suites), sorted by name.
std::vector<Test> discover(const fs::path& root, const std::vector<std::string>& filters) {
  std::vector<Test> tests;
  auto add = [&](const fs::path& dir) {
    std::string name = fs::relative(dir, root).string();
    if (name == ".") name = dir.filename().string();
    const bool match =
        filters.empty() || std::any_of(filters.begin(), filters.end(), [&](const std::string& f) {
          return name.find(f) != std::string::npos;
        });
    if (match) tests.push_back({name, dir, {}, 0});
  };
  std::error_code ec;
  if (fs::exists(root / "model.onnx", ec)) {
    add(root);
    return tests;
  }
  for (const auto& e : fs::directory_iterator(root, ec)) {
    if (!e.is_directory()) continue;
    if (fs::exists(e.path() / "model.onnx", ec)) {
      add(e.path());
      continue;
    }
    for (const auto& sub : fs::directory_iterator(e.path(), ec)) {
      if (sub.is_directory() && fs::exists(sub.path() / "model.onnx", ec)) add(sub.path());
    }
  }
  std::sort(tests.begin(), tests.end(),
            [](const Test& a, const Test& b) { return a.name < b.name; });
  return tests;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s;
}

// ---- Running: in process, or one forked child per test.

Outcome run_in_child_process(const Test& t, const Options& o,
                             const npu::conformance::TestOptions& topts) {
  auto device = npu::Device::open(o.device);
  if (!device) return {Status::kFail, "device: " + device.error().message};
  if (o.preempted_device.empty()) return npu::conformance::run_test(t.dir.string(), *device, topts);
  auto preempted = npu::Device::open(o.preempted_device);
  if (!preempted) return {Status::kFail, "preempted device: " + preempted.error().message};
  npu::conformance::TestOptions with = topts;
  with.preempted = &*preempted;
  return npu::conformance::run_test(t.dir.string(), *device, with);
}

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    reset();
    fd_ = std::exchange(o.fd_, -1);
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Child {
  pid_t pid = -1;
  size_t test = 0;
  Fd result, log;  // the child's result line and its stderr
  std::string result_text, log_text;
  Clock::time_point start;
  bool timed_out = false;
};

// Reads what is available; false at end of file.
bool drain(Fd& fd, std::string& into, size_t keep_tail) {
  char buf[4096];
  const ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n > 0) {
    into.append(buf, static_cast<size_t>(n));
    if (keep_tail && into.size() > 2 * keep_tail) into.erase(0, into.size() - keep_tail);
    return true;
  }
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  fd.reset();
  return false;
}

std::string last_line(const std::string& text) {
  std::string s = text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  const auto nl = s.rfind('\n');
  return one_line(nl == std::string::npos ? s : s.substr(nl + 1));
}

std::string format_result(const Outcome& out) {
  return std::string(npu::conformance::status_name(out.status)) + "\t" +
         std::to_string(out.device_ops) + "\t" + std::to_string(out.host_ops) + "\t" +
         std::to_string(out.hazards) + "\t" + one_line(out.first_hazard) + "\t" +
         one_line(out.reason) + "\n";
}

std::optional<Outcome> parse_result(const std::string& text) {
  std::istringstream in(text);
  std::string status, device, host, hazards, first_hazard, reason;
  if (!std::getline(in, status, '\t') || !std::getline(in, device, '\t') ||
      !std::getline(in, host, '\t') || !std::getline(in, hazards, '\t') ||
      !std::getline(in, first_hazard, '\t') || !std::getline(in, reason)) {
    return std::nullopt;
  }
  Outcome out;
  if (status == "PASS") {
    out.status = Status::kPass;
  } else if (status == "FAIL") {
    out.status = Status::kFail;
  } else if (status == "SKIP") {
    out.status = Status::kSkip;
  } else {
    return std::nullopt;
  }
  out.reason = reason;
  out.device_ops = std::strtoull(device.c_str(), nullptr, 10);
  out.host_ops = std::strtoull(host.c_str(), nullptr, 10);
  out.hazards = std::strtoull(hazards.c_str(), nullptr, 10);
  out.first_hazard = first_hazard;
  return out;
}

Outcome finish_child(Child& c, int wstatus, double timeout_s) {
  if (c.timed_out) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "timed out after %g s", timeout_s);
    return {Status::kFail, buf};
  }
  const std::string tail = last_line(c.log_text);
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    std::string r = "crashed: signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    if (!tail.empty()) r += "; last stderr line: " + tail;
    return {Status::kFail, r};
  }
  // The child writes "STATUS\tDEVICE_OPS\tHOST_OPS\tHAZARDS\tFIRST_HAZARD\tREASON\n" and
  // exits 0.
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) {
    if (auto out = parse_result(c.result_text)) return *out;
  }
  std::string r =
      "child exited with status " + std::to_string(WEXITSTATUS(wstatus)) + " without a result";
  if (!tail.empty()) r += "; last stderr line: " + tail;
  return {Status::kFail, r};
}

std::optional<Child> spawn(std::vector<Test>& tests, size_t index, const Options& o,
                           const npu::conformance::TestOptions& topts) {
  int result_pipe[2], log_pipe[2];
  if (::pipe(result_pipe) != 0) return std::nullopt;
  if (::pipe(log_pipe) != 0) {
    ::close(result_pipe[0]);
    ::close(result_pipe[1]);
    return std::nullopt;
  }
  std::cout.flush();
  std::cerr.flush();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(result_pipe[0]);
    ::close(log_pipe[0]);
    ::dup2(log_pipe[1], STDOUT_FILENO);
    ::dup2(log_pipe[1], STDERR_FILENO);
    ::close(log_pipe[1]);
    const std::string line = format_result(run_in_child_process(tests[index], o, topts));
    for (size_t done = 0; done < line.size();) {
      const ssize_t n = ::write(result_pipe[1], line.data() + done, line.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::_exit(0);  // no destructors: the device's threads and the parent's state stay as they are
  }
  ::close(result_pipe[1]);
  ::close(log_pipe[1]);
  Child c;
  c.result = Fd(result_pipe[0]);
  c.log = Fd(log_pipe[0]);
  if (pid < 0) return std::nullopt;
  c.pid = pid;
  c.test = index;
  c.start = Clock::now();
  return c;
}

int run_forked(std::vector<Test>& tests, const Options& o,
               const npu::conformance::TestOptions& topts) {
  std::vector<Child> running;
  size_t next = 0;
  const auto timeout = std::chrono::duration<double>(o.timeout_s);
  while (next < tests.size() || !running.empty()) {
    while (next < tests.size() && running.size() < static_cast<size_t>(o.jobs)) {
      auto c = spawn(tests, next, o, topts);
      if (!c) return usage_error(std::string("fork/pipe failed: ") + std::strerror(errno));
      running.push_back(std::move(*c));
      ++next;
    }
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, bool>> owner;  // (child, is result fd)
    for (size_t i = 0; i < running.size(); ++i) {
      if (running[i].result.get() >= 0) {
        fds.push_back({running[i].result.get(), POLLIN, 0});
        owner.emplace_back(i, true);
      }
      if (running[i].log.get() >= 0) {
        fds.push_back({running[i].log.get(), POLLIN, 0});
        owner.emplace_back(i, false);
      }
    }
    if (!fds.empty() && ::poll(fds.data(), fds.size(), 100) > 0) {
      for (size_t k = 0; k < fds.size(); ++k) {
        if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Child& c = running[owner[k].first];
        if (owner[k].second) {
          drain(c.result, c.result_text, 0);
        } else {
          drain(c.log, c.log_text, 8192);
        }
      }
    }
    for (size_t i = 0; i < running.size();) {
      Child& c = running[i];
      if (!c.timed_out && Clock::now() - c.start > timeout) {
        ::kill(c.pid, SIGKILL);
        c.timed_out = true;
      }
      if (c.result.get() >= 0 || c.log.get() >= 0) {
        ++i;
        continue;
      }
      int wstatus = 0;
      while (::waitpid(c.pid, &wstatus, 0) < 0 && errno == EINTR) {
      }
      Test& t = tests[c.test];
      t.outcome = finish_child(c, wstatus, o.timeout_s);
      t.seconds = std::chrono::duration<double>(Clock::now() - c.start).count();
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return 0;
}

int run_in_process(std::vector<Test>& tests, const Options& o,
                   const npu::conformance::TestOptions& topts) {
  auto device = npu::Device::open(o.device);
  if (!device) return usage_error(device.error().message);
  std::optional<npu::Device> preempted;
  npu::conformance::TestOptions with = topts;
  if (!o.preempted_device.empty()) {
    auto d = npu::Device::open(o.preempted_device);
    if (!d) return usage_error(d.error().message);
    preempted.emplace(std::move(*d));
    with.preempted = &*preempted;
  }
  for (Test& t : tests) {
    const auto start = Clock::now();
    t.outcome = npu::conformance::run_test(t.dir.string(), *device, with);
    t.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return 0;
}

// ---- Report.

// A skip reason without node and input names, to group them: "node 'n' (Hardmax): unsupported
// operator" -> "Hardmax: unsupported operator".
std::string skip_group(const std::string& reason) {
  static const std::regex node("node '[^']*' \\(([^)]*)\\)");
  static const std::regex names("(input|output|initializer) '[^']*'[: ]*");
  std::string s = std::regex_replace(std::regex_replace(reason, node, "$1"), names, "");
  if (s.starts_with("model.onnx: ")) s.erase(0, 12);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "Runs the ONNX backend tests of libonnx-testdata through the compiler and the "
      "device and compares with the reference outputs (docs/conformance.md)."};
  app.add_option("--data", o.data, "test data: the suites' parent directory, a suite or a test")
      ->capture_default_str();
  app.add_option("--filter", o.filters, "run only tests whose name contains SUBSTR (repeatable)");
  app.add_option("--expected-failures", o.expected_failures,
                 "tests known to fail, one name per line, '# reason' comments");
  app.add_flag("--list", o.list, "print one line per test: status, name, reason");
  app.add_option("--json", o.json, "write the results as JSON to FILE");
  app.add_option("--min-passed", o.min_passed,
                 "fail unless at least N tests pass (a test turning into a SKIP is a regression)");
  app.add_option("--min-on-device", o.min_on_device,
                 "fail unless at least N passing tests ran operators on the NPU");
  app.add_option("-j,--jobs", o.jobs, "tests run at a time")->check(CLI::Range(1, 256));
  app.add_option("--timeout", o.timeout_s, "seconds a test may take (forked runs)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--no-fork", o.no_fork, "run the tests in this process, one at a time");
  app.add_flag("--host-only", o.host_only,
               "compile every operator for the host (tells device bugs from host ones)");
  app.add_option("--device", o.device, "device string (default: $NPU_DEVICE or emu:)");
  app.add_option("--preempted-device", o.preempted_device,
                 "also run each passing test on this device (one that preempts every job at "
                 "every safe point, e.g. emu:emu/configs/preempt_stress.json) and fail it unless "
                 "the outputs are byte-identical and every safe point preempted the job");
  app.add_flag("--racecheck", o.racecheck,
               "run the device segments under the synchronization checker; a hazard fails the "
               "run");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kUsageError;  // --help exits 0
  }

  std::map<std::string, std::string> expected;
  if (!o.expected_failures.empty()) {
    auto list = npu::conformance::read_expected_failures(o.expected_failures);
    if (!list) return usage_error(list.error().message);
    expected = std::move(*list);
  }
  if (!fs::is_directory(o.data)) return usage_error(o.data + ": no such directory");
  std::vector<Test> tests = discover(o.data, o.filters);
  if (tests.empty()) return usage_error(o.data + ": no tests (no */model.onnx) match");

  npu::conformance::TestOptions topts;
  topts.host_only = o.host_only;
  topts.racecheck = o.racecheck;
  const auto start = Clock::now();
  if (!o.no_fork) npu::conformance::load_onnx_schemas();
  const int rc = o.no_fork ? run_in_process(tests, o, topts) : run_forked(tests, o, topts);
  if (rc != 0) return rc;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  size_t passed = 0, xfail = 0, fail = 0, skipped = 0, stale = 0, racy = 0;
  size_t on_device = 0, device_ops = 0, host_ops = 0;  // over the passing tests
  std::map<std::string, size_t> skip_groups;
  std::vector<std::string> lines;
  nlohmann::json jtests = nlohmann::json::array();
  for (const Test& t : tests) {
    const bool listed = expected.count(t.name) > 0;
    const Outcome& out = t.outcome;
    std::string note;
    switch (out.status) {
      case Status::kPass:
        ++passed;
        on_device += out.device_ops > 0;
        device_ops += out.device_ops;
        host_ops += out.host_ops;
        break;
      case Status::kSkip:
        ++skipped;
        ++skip_groups[skip_group(out.reason)];
        break;
      case Status::kFail:
        ++(listed ? xfail : fail);
        if (!o.list)
          lines.push_back(std::string("FAIL ") + (listed ? "(expected) " : "") + t.name + ": " +
                          out.reason);
        break;
    }
    if (out.hazards > 0) {
      ++racy;
      lines.push_back("RACE " + t.name + ": " + std::to_string(out.hazards) + " hazard" +
                      (out.hazards == 1 ? "" : "s") + ", the first: " + out.first_hazard);
    }
    if (listed && out.status != Status::kFail) {
      ++stale;
      note = out.status == Status::kPass ? "now passes: remove it from the list"
                                         : "now skipped: remove it from the list";
      lines.push_back("XPASS " + t.name + ": " + note);
    }
    if (o.list) {
      std::cout << npu::conformance::status_name(out.status) << " "
                << (listed && out.status == Status::kFail ? "(expected) " : "") << t.name
                << (out.reason.empty() ? "" : ": " + out.reason) << "\n";
    }
    jtests.push_back({{"name", t.name},
                      {"status", npu::conformance::status_name(out.status)},
                      {"reason", out.reason},
                      {"expected_failure", listed},
                      {"device_ops", out.device_ops},
                      {"host_ops", out.host_ops},
                      {"hazards", out.hazards},
                      {"seconds", t.seconds}});
  }
  // Listed tests that are not in the data at all (another libonnx-testdata version, a typo).
  if (o.filters.empty()) {
    for (const auto& [name, reason] : expected) {
      const bool found =
          std::any_of(tests.begin(), tests.end(), [&](const Test& t) { return t.name == name; });
      if (!found) {
        std::cerr << "onnx_conformance: warning: expected failure '" << name
                  << "' is not a test in " << o.data << "\n";
      }
    }
  }
  if (o.list && !skip_groups.empty()) {
    std::vector<std::pair<size_t, std::string>> groups;
    for (const auto& [reason, n] : skip_groups) groups.emplace_back(n, reason);
    std::sort(groups.rbegin(), groups.rend());
    std::cout << "skip reasons:\n";
    for (const auto& [n, reason] : groups) std::cout << "  " << n << "  " << reason << "\n";
  }
  for (const std::string& l : lines) std::cout << l << "\n";
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f", seconds);
  std::cout << "onnx conformance: " << passed << " passed, " << xfail << " failed (expected), "
            << fail << " failed (unexpected), " << skipped << " skipped (unsupported), of "
            << tests.size();
  if (stale) std::cout << "; " << stale << " listed as expected failures but not failing";
  std::cout << " (" << secs << " s)\n";
  std::cout << "passing tests: " << on_device << " of " << passed << " ran operators on the NPU; "
            << device_ops << " ops on the NPU, " << host_ops << " on the host\n";
  if (o.racecheck) {
    std::cout << "racecheck: " << racy << " of " << tests.size()
              << " tests have hazards in their compiled code\n";
  }

  if (!o.json.empty()) {
    nlohmann::json j = {{"data", o.data},
                        {"summary",
                         {{"passed", passed},
                          {"failed_expected", xfail},
                          {"failed_unexpected", fail},
                          {"skipped", skipped},
                          {"expected_failures_not_failing", stale},
                          {"passed_on_device", on_device},
                          {"passed_device_ops", device_ops},
                          {"passed_host_ops", host_ops},
                          {"tests_with_hazards", racy},
                          {"total", tests.size()},
                          {"seconds", seconds}}},
                        {"tests", jtests}};
    std::ofstream f(o.json);
    f << j.dump(2) << "\n";
    if (!f) return usage_error(o.json + ": cannot write");
  }
  bool floor_ok = true;
  if (passed < o.min_passed) {
    std::cout << "onnx conformance: " << passed << " passed, below the floor of " << o.min_passed
              << " (--min-passed)\n";
    floor_ok = false;
  }
  if (on_device < o.min_on_device) {
    std::cout << "onnx conformance: " << on_device
              << " passing tests used the NPU, below the floor of " << o.min_on_device
              << " (--min-on-device)\n";
    floor_ok = false;
  }
  return fail == 0 && stale == 0 && racy == 0 && floor_ok ? 0 : 1;
}

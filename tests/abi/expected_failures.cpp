// Expected failures and the verdict (expected_failures.h).
#include "expected_failures.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace npu::abi {

Expected<std::map<std::string, std::string>> load_expected_failures(const std::string& path,
                                                                    const std::string& backend) {
  std::ifstream in(path);
  if (!in) return make_error(ENOENT, fmt::format("expected failures '{}': cannot open", path));
  std::map<std::string, std::string> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream fields(line);
    std::string b, test, reason;
    if (!(fields >> b) || b.starts_with('#')) continue;
    if (!(fields >> test) || test.find('.') == std::string::npos) {
      return make_error(EINVAL, fmt::format("expected failures '{}': line {}: 'BACKEND "
                                            "Suite.Test reason' expected",
                                            path, n));
    }
    std::getline(fields >> std::ws, reason);
    if (b == backend) out[test] = reason;
  }
  return out;
}

void ResultSorter::OnTestEnd(const ::testing::TestInfo& info) {
  const std::string name = std::string(info.test_suite_name()) + "." + info.name();
  const ::testing::TestResult* r = info.result();
  if (r->Skipped()) {
    skipped.insert(name);
  } else if (r->Failed()) {
    failed.insert(name);
  } else {
    passed.insert(name);
  }
}

int verdict(const ResultSorter& results, const std::map<std::string, std::string>& expected) {
  int unexpected = 0;
  size_t expected_failed = 0;
  for (const std::string& t : results.failed) {
    if (const auto it = expected.find(t); it != expected.end()) {
      std::printf("npu-abi-test: expected failure: %s (%s)\n", t.c_str(), it->second.c_str());
      ++expected_failed;
    } else {
      std::printf("npu-abi-test: FAILED: %s\n", t.c_str());
      ++unexpected;
    }
  }
  for (const auto& [t, reason] : expected) {
    if (results.passed.count(t) != 0) {
      std::printf("npu-abi-test: UNEXPECTEDLY PASSED: %s (listed: %s)\n", t.c_str(),
                  reason.c_str());
      ++unexpected;
    }
  }
  std::printf("npu-abi-test: %zu passed, %zu skipped, %zu expected failure(s), %d unexpected\n",
              results.passed.size(), results.skipped.size(), expected_failed, unexpected);
  return unexpected == 0 ? 0 : 1;
}

}  // namespace npu::abi

// Expected failures of the ABI suite per backend (expected_failures.txt), and the gtest
// listener that sorts a run's results against them: a failure not listed fails the run, and
// so does a listed test that passed (the list must stay true).
//
// Threading: gtest calls the listener on its own thread. Lifetime: owned by gtest once added.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "npu/expected.h"

namespace npu::abi {

/// "Suite.Test" -> reason, the lines of `path` for `backend`. Errors name the file and line.
Expected<std::map<std::string, std::string>> load_expected_failures(const std::string& path,
                                                                    const std::string& backend);

class ResultSorter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo& info) override;

  std::set<std::string> failed, passed, skipped;
};

/// Prints the verdict against `expected`; returns the exit status (0: as expected).
int verdict(const ResultSorter& results, const std::map<std::string, std::string>& expected);

}  // namespace npu::abi

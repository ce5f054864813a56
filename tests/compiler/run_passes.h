// Runs named compiler passes over a graph, in order, through a PassManager (the compiler
// tests that check one pass or a short pipeline). Header-only.
#pragma once

#include <string>
#include <vector>

#include "npu/compiler/pass_manager.h"

namespace npu::compiler::testing {

inline Expected<void> run_passes(Graph& g, const std::vector<std::string>& names) {
  PassManager pm;
  for (const auto& n : names) pm.add(create_pass(n));
  return pm.run(g);
}

}  // namespace npu::compiler::testing

// The pass manager runs a pipeline of passes over a Graph, verifying the graph after each
// pass and dumping it (through spdlog, logger "npuc") after the passes the caller names —
// the compiler's --print-after. The default pipeline is pass_registry.def, in order.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "npu/compiler/graph.h"
#include "npu/compiler/pass.h"
#include "npu/expected.h"

namespace npu::compiler {

struct PassInfo {
  std::string_view name;
  std::string_view description;
};

/// Every registered pass, in pipeline order.
const std::vector<PassInfo>& registered_passes();
/// A new instance of the named pass, or nullptr if there is none.
std::unique_ptr<Pass> create_pass(std::string_view name);

struct PassOptions {
  /// Dump the graph after these passes ("all" for every pass).
  std::vector<std::string> print_after;
  /// Skip these passes.
  std::vector<std::string> disable;
  /// Run Graph::verify() after each pass (an invalid graph is an error naming the pass).
  bool verify_each = true;
  /// Receives the dumps; by default they go to spdlog at info level.
  std::function<void(std::string_view pass, const std::string& dump)> printer;
};

class PassManager {
 public:
  /// The registry's pipeline.
  static PassManager default_pipeline();

  void add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  std::vector<std::string_view> pass_names() const;
  /// Runs the passes in order; stops at the first error (prefixed with the pass name).
  [[nodiscard]] Expected<void> run(Graph& g, const PassOptions& options = {}) const;

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
};

}  // namespace npu::compiler

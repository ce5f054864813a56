// A compiler pass: a small named rewrite of the Graph. Each pass lives in one .cpp under
// compiler/src/passes/ that opens with why it exists, and is listed (in pipeline order) in
// pass_registry.def. Passes keep the graph valid: the pass manager verifies it after each one.
#pragma once

#include <memory>
#include <string_view>

#include "npu/compiler/graph.h"
#include "npu/expected.h"

namespace npu::compiler {

class Pass {
 public:
  virtual ~Pass() = default;
  /// The registry name ("fold-constants").
  virtual std::string_view name() const = 0;
  /// Rewrites `g`; returns whether anything changed. An error names the node and the reason.
  virtual Expected<bool> run(Graph& g) = 0;
};

// create_<Class>Pass() for every pass in the registry.
#define NPUC_PASS(cls, pass_name, description) std::unique_ptr<Pass> create_##cls##Pass();
#include "npu/compiler/pass_registry.def"
#undef NPUC_PASS

}  // namespace npu::compiler

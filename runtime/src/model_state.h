// ModelState and RunState: what a loaded Model owns, and what one run of it keeps — the
// private data the runtime's parts share (package_loader, tensor_io, segment_runner,
// batching, model.cpp).
//
// Semantics: a ModelState is built once by load_package() and lives behind Model (buffers
// at their fixed VAs, command buffers built at load, the Context — recreated after a
// fault — and the stats of the last run). A RunState lives for one run of the graph (one
// batch slice): the sizes bound to symbolic dims and the host copies of tensor values.
//
// Threading: none; a Model runs one run() at a time. Lifetime: ModelState is owned by its
// Model (std::unique_ptr, so moving a Model keeps the state's address); a RunState refers to
// its ModelState and must not outlive the run.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npu/buffer.h"
#include "npu/command_buffer.h"
#include "npu/context.h"
#include "npu/device.h"
#include "npu/format/npy.h"
#include "npu/format/package.h"
#include "npu/runtime/model.h"

namespace npu::runtime {

using Shape = std::vector<int64_t>;
using Arrays = std::map<std::string, format::NpyArray>;
/// A run's inputs by name, not copied (Model::run_views; Model::run passes views of its arrays).
using Views = std::map<std::string, format::ArrayView>;

struct ModelState {
  explicit ModelState(Device d) : device(std::move(d)) {}

  Device device;
  std::string name;
  format::Package package;
  std::map<std::string, Buffer> buffers;
  /// Per device segment: its command buffer, built, validated and uploaded at load.
  std::map<size_t, CommandBuffer> cmdbufs;
  /// Per device segment: its commands for the run statistics, split once at load.
  std::map<size_t, std::shared_ptr<const std::vector<npu_cmd>>> commands;
  std::optional<Context> context;
  Priority priority = Priority::kNormal;  // of `context` and of any context made after a fault
  std::vector<TensorDesc> inputs, outputs;
  RunStats stats;

  /// "<name>: <what>", the prefix of every error.
  std::string where(const std::string& what) const { return name + ": " + what; }
};

/// One run of the graph: symbolic-dim bindings, the host copies of tensors by name, and the
/// given inputs (copied into `values` only when a host segment or the outputs need them).
struct RunState {
  ModelState& m;
  std::map<std::string, int64_t> bindings;
  Arrays values;
  const Views* inputs = nullptr;
};

/// Model's private state for the runtime's own functions (run_batched()).
struct ModelAccess {
  static ModelState& state(Model& model) { return *model.state_; }
};

/// One run of the whole graph on `inputs` (no batch slicing), recording m.stats.
Expected<Arrays> run_once(ModelState& m, const Views& inputs, const RunOptions& options);

}  // namespace npu::runtime

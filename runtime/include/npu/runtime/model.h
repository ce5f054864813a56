// Model: a compiled model package (.npub, docs/package.md) loaded on a Device and run — the
// entry point of the model runtime (npu::runtime, docs/runtime.md), which sits on libnpu.
//
// Semantics: load() reads and validates the package against the device's config
// (format::read_package), checks every buffer's fixed address against the device's VA range
// and alignment, allocates each buffer at its address (constants filled from their section
// and device read-only, the others zeroed) and creates a Context. run() checks each input's
// dtype and shape (a symbolic dim binds to the size given; a dynamic batch larger than the
// compiled one runs slice by slice, see run()), writes the inputs into their buffer
// locations (plain C order, explicit strides, or NCHW tensors stored NHWC), runs the
// segments in order — device segments submit their command buffer with the buffers they
// list and wait; host segments run their ONNX op with the host ops of npu/ops/ops.h on host
// copies of their tensors (read from / written back to buffers when the tensor has a
// location) — and reads the graph outputs back. run_batched() (npu/runtime/batch.h) runs a
// batch of any multiple of the input's batch, e.g. for calibration.
//
// Errors name the package and what was wrong, e.g. "m.npub: input 'x': dtype int8, expected
// float32", "m.npub: segment 'conv0': job error: mmu on dma_in at command 0 (dma_load), address
// 0x200000000", "m.npub: segment 'sm' (host): host op 'Foo' is not supported". A device fault
// bans the context; the next run() creates a new one.
//
// Threading: not thread-safe; one run() at a time. Lifetime: move-only; owns its Buffers and
// Context (which keep the device alive). A moved-from Model may only be destroyed or
// assigned to.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npu/context.h"
#include "npu/device.h"
#include "npu/expected.h"
#include "npu/format/npy.h"
#include "npu/format/package.h"
#include "npu/job.h"
#include "npu/runtime/run_stats.h"
#include "npu/trace.h"

namespace npu {

namespace runtime {
struct ModelState;
struct ModelAccess;
}  // namespace runtime

/// A graph input or output: name, dtype and logical shape (symbolic dims keep their symbol).
struct TensorDesc {
  std::string name;
  format::DType dtype = format::DType::kFloat32;
  std::vector<format::Dim> shape;
};

struct RunOptions {
  /// How long the whole run() may take: device segments wait at most the time left, host
  /// segments stop when it runs out (their loops poll npu::cancelled()), and a segment does
  /// not start after it; the run then fails with ETIMEDOUT naming the segment.
  std::chrono::nanoseconds timeout = Job::kForever;
  /// The same limit as a point on the steady clock, e.g. one budget shared by several runs;
  /// run() sets it from `timeout` when it is unset (the earlier of the two applies).
  std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt;
  /// Read each device segment's JobProfile (needs DRM_NPU_CAP_JOB_PROFILE) for per-engine
  /// stats and the trace.
  bool collect_profile = false;
  /// Run each device segment under the synchronization checker (SubmitOptions::racecheck,
  /// needs DRM_NPU_CAP_RACECHECK) and keep its hazards in SegmentStats::hazards. Hazards are
  /// not errors: run() succeeds; RunStats::hazard_count() says whether there were any.
  bool racecheck = false;
};

class Model {
 public:
  /// Reads `path` and loads it (see the header comment). Errors name the path.
  static Expected<Model> load(const Device& device, const std::string& path);
  /// Loads an in-memory package; `name` prefixes errors.
  static Expected<Model> load(const Device& device, format::Package package, std::string name);

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model();

  const std::vector<TensorDesc>& inputs() const;
  const std::vector<TensorDesc>& outputs() const;
  const format::Package& package() const;
  const std::string& name() const;

  /// Runs the model on `inputs` (by graph input name) and returns the graph outputs by name.
  /// When an input's leading dim is symbolic (a dynamic batch) and the given batch is a
  /// multiple of the batch the device code was compiled for, the model runs once per slice
  /// of that many rows and the outputs are concatenated along dim 0 (stats are summed).
  Expected<std::map<std::string, format::NpyArray>> run(
      const std::map<std::string, format::NpyArray>& inputs, const RunOptions& options = {});
  /// run() on views of inputs the caller keeps valid and unchanged until it returns: their
  /// bytes go straight into the device buffers, with no copy first (a host segment or an
  /// output that reads an input gets a copy). The Python module passes NumPy arrays this way.
  Expected<std::map<std::string, format::NpyArray>> run_views(
      const std::map<std::string, format::ArrayView>& inputs, const RunOptions& options = {});

  /// Statistics of the last run() (also of a failed one, up to the failure).
  const RunStats& last_stats() const;

  /// Runs the model's jobs on a context of priority `p` from now on (load() makes a NORMAL
  /// one): the context is made again at once, so a refusal shows here — EPERM for REALTIME
  /// without the privilege (API 1.4), EDQUOT past the file's context limit. On an error the
  /// old context stays.
  Expected<void> set_priority(Priority p);
  Priority priority() const;

  /// Chrome/Perfetto trace JSON of the last run's device segments (needs collect_profile);
  /// with racecheck, hazards are flow arrows between their commands, named by layer.
  std::string trace_json(TraceOptions options = {}) const;
  Expected<void> write_trace(const std::string& path, TraceOptions options = {}) const;

 private:
  friend struct runtime::ModelAccess;
  explicit Model(std::unique_ptr<runtime::ModelState> state);

  std::unique_ptr<runtime::ModelState> state_;
};

}  // namespace npu

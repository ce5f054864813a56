// Model: a compiled model package (.npub, docs/package.md) loaded on a Device and run.
//
// Semantics: load() reads and validates the package against the device's config
// (format::read_package), checks every buffer's fixed address against the device's VA range
// and alignment, allocates each buffer at its address (constants filled from their section
// and device read-only, the others zeroed) and creates a Context. run() checks each input's
// dtype and shape (a symbolic dim binds to the size given; a dynamic batch larger than the
// compiled one runs slice by slice, see run()), writes the
// inputs into their buffer locations (plain C order, explicit strides, or NCHW tensors stored
// NHWC), runs the segments in order — device segments submit their command buffer with the
// buffers they list and wait; host segments run their ONNX op with the host ops of
// npu/ops/ops.h on host copies of their tensors (read from / written back to buffers when the
// tensor has a location) — and reads the graph outputs back.
//
// Errors name the package and what was wrong, e.g. "m.npub: input 'x': dtype int8, expected
// float32", "m.npub: segment 'conv0': job error: mmu on dma_in at command 0 (dma_load), address
// 0x200000000", "m.npub: segment 'sm' (host): host op 'Foo' is not supported". A device fault
// bans the context; the next run() creates a new one.
//
// Threading: not thread-safe; one run() at a time. Lifetime: move-only; owns its Buffers and
// Context (which keep the device alive).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "npu/buffer.h"
#include "npu/command_buffer.h"
#include "npu/context.h"
#include "npu/device.h"
#include "npu/expected.h"
#include "npu/format/npy.h"
#include "npu/format/package.h"
#include "npu/job.h"
#include "npu/trace.h"

namespace npu {

/// A graph input or output: name, dtype and logical shape (symbolic dims keep their symbol).
struct TensorDesc {
  std::string name;
  format::DType dtype = format::DType::kFloat32;
  std::vector<format::Dim> shape;
};

struct RunOptions {
  /// How long to wait for each device segment.
  std::chrono::nanoseconds timeout = Job::kForever;
  /// Read each device segment's JobProfile (needs DRM_NPU_CAP_JOB_PROFILE) for per-engine
  /// stats and the trace.
  bool collect_profile = false;
};

/// One executed segment of the last run.
struct SegmentStats {
  std::string name;
  format::SegmentKind kind = format::SegmentKind::kDevice;
  std::string op_type;                // host segments
  uint64_t cycles = 0;                // device segments: modeled device cycles
  uint64_t host_ns = 0;               // wall time of the segment
  std::optional<JobProfile> profile;  // device segments with RunOptions::collect_profile
  std::vector<npu_cmd> commands;      // device segments: the command buffer's commands
};

struct RunStats {
  uint64_t device_cycles = 0;                               // sum over device segments
  uint64_t wall_ns = 0;                                     // the whole run()
  std::array<uint64_t, DRM_NPU_MAX_ENGINES> busy_cycles{};  // summed from the profiles
  std::vector<SegmentStats> segments;
  bool has_profile = false;  // every device segment had a profile
  /// The device segments' profiles as one job: timelines offset by the cycles of the
  /// segments before, counters summed; `commands` is the concatenation matching its
  /// cmd_index values (for markers in traces). Empty without profiles.
  JobProfile merged_profile() const;
  /// The same timeline with each host segment's wall time (converted to cycles at
  /// `clock_hz`) placed between the device segments, and the host segments as spans (for
  /// traces that show where the host ran).
  JobProfile merged_profile_with_host(uint64_t clock_hz, std::vector<HostSpan>* spans) const;
  std::vector<npu_cmd> merged_commands() const;
};

class Model {
 public:
  /// Reads `path` and loads it (see the header comment). Errors name the path.
  static Expected<Model> load(const Device& device, const std::string& path);
  /// Loads an in-memory package; `name` prefixes errors.
  static Expected<Model> load(const Device& device, format::Package package, std::string name);

  Model(Model&&) noexcept = default;
  Model& operator=(Model&&) noexcept = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  ~Model() = default;

  const std::vector<TensorDesc>& inputs() const { return inputs_; }
  const std::vector<TensorDesc>& outputs() const { return outputs_; }
  const format::Package& package() const { return package_; }
  const std::string& name() const { return name_; }

  /// Runs the model on `inputs` (by graph input name) and returns the graph outputs by name.
  /// When an input's leading dim is symbolic (a dynamic batch) and the given batch is a
  /// multiple of the batch the device code was compiled for, the model runs once per slice
  /// of that many rows and the outputs are concatenated along dim 0 (stats are summed).
  Expected<std::map<std::string, format::NpyArray>> run(
      const std::map<std::string, format::NpyArray>& inputs, const RunOptions& options = {});

  /// Statistics of the last run() (also of a failed one, up to the failure).
  const RunStats& last_stats() const { return stats_; }

  /// Chrome/Perfetto trace JSON of the last run's device segments (needs collect_profile).
  std::string trace_json(TraceOptions options = {}) const;
  Expected<void> write_trace(const std::string& path, TraceOptions options = {}) const;

 private:
  Model() = default;
  struct Impl;
  Expected<std::map<std::string, format::NpyArray>> run_once(
      const std::map<std::string, format::NpyArray>& inputs, const RunOptions& options);
  /// The compiled batch of the first dynamic-batch input in a device buffer (0: none), and
  /// the batch given for it.
  int64_t compiled_batch(const std::map<std::string, format::NpyArray>& inputs,
                         int64_t* given) const;

  std::optional<Device> device_;
  std::string name_;
  format::Package package_;
  std::map<std::string, Buffer> buffers_;
  /// Per segment: its command buffer, built, validated and uploaded on first use.
  std::map<size_t, CommandBuffer> cmdbufs_;
  std::optional<Context> context_;
  std::vector<TensorDesc> inputs_, outputs_;
  RunStats stats_;
};

}  // namespace npu

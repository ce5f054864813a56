// The ONNX conformance runner's library (onnx_conformance, docs/conformance.md): one backend
// test of libonnx-testdata (a directory with model.onnx and test_data_set_*/input_N.pb,
// output_N.pb) is imported, compiled with npu::compiler::compile_onnx, loaded into an
// npu::Model and run; its outputs are compared with the reference at ONNX's tolerances.
// run_test() never throws: every error, exception included, becomes an Outcome.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "npu/device.h"
#include "npu/expected.h"
#include "npu/format/npy.h"

namespace npu::conformance {

enum class Status { kPass, kFail, kSkip };
const char* status_name(Status s);  // "PASS", "FAIL", "SKIP"

/// What one test gave: the status and, for FAIL and SKIP, one line saying why.
struct Outcome {
  Status status = Status::kFail;
  std::string reason;
  /// The partition of the compiled model (0 and 0 when it did not compile).
  size_t device_ops = 0, host_ops = 0;
  /// With TestOptions::racecheck: the hazards the synchronization checker found in the
  /// device segments, and the first one as a line naming segment and layer.
  uint64_t hazards = 0;
  std::string first_hazard = {};
};

/// ONNX's backend-test tolerances (numpy.testing.assert_allclose): |got - want| <= atol +
/// rtol * |want|; NaN equals NaN. Integers and bool compare exactly.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
};

/// "" when `got` matches `want` (same dtype, same shape, every element within tolerance),
/// else one line with the first mismatch: "element 5 [1, 2]: got 0.5, expected 0.25 (3 of 24
/// elements differ, max abs diff 0.25)", "shape [2, 3], expected [3, 2]", "dtype int64,
/// expected int32".
std::string compare(const format::NpyArray& got, const format::NpyArray& want,
                    const Tolerance& tol = {});

struct TestOptions {
  Tolerance tolerance;
  /// How long each device segment may run before the test fails.
  std::chrono::milliseconds segment_timeout{30'000};
  /// Compile with every operator on the host (CompileOptions::host_only): tells a device
  /// (lowering, codegen, emulator) bug from a host-op or import one.
  bool host_only = false;
  /// Run the device segments under the synchronization checker (RunOptions::racecheck) and
  /// count the hazards in Outcome::hazards; the status still says whether the outputs match.
  bool racecheck = false;
  /// Also run every passing package on this device — one configured to preempt every job at
  /// every safe point (scheduling.preempt_every_safe_point, SRAM scrambled in between) — and
  /// fail unless its outputs are byte-identical to the first run's and it was preempted at
  /// every safe point.
  const Device* preempted = nullptr;
};

/// Runs the backend test in `dir` on `device`; `name` ("node/test_abs") names it in reasons.
/// SKIP: the model or its data use an operator, element type or feature outside the supported
/// set (the importer's ENOTSUP errors). FAIL: anything else that is not a match.
Outcome run_test(const std::string& dir, const Device& device, const TestOptions& options = {});

/// Builds ONNX's operator schema registry, which the importer reads and ONNX builds on first
/// use (tens of milliseconds, several times that under ASan). The forking runner calls it once
/// before its first fork, so each child inherits the registry instead of building it again.
void load_onnx_schemas();

/// The expected-failures list: one test name per line, optionally followed by `# reason`;
/// blank lines and lines starting with '#' are ignored. Returns name -> reason.
Expected<std::map<std::string, std::string>> parse_expected_failures(std::string_view text,
                                                                     const std::string& source);
Expected<std::map<std::string, std::string>> read_expected_failures(const std::string& path);

}  // namespace npu::conformance

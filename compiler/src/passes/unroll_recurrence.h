// Private: when the unroll-recurrence pass turns a recurrence (npu.RNNRecurrence,
// GRURecurrence, LSTMRecurrence, written by split-recurrence) into device operators, shared by
// the pass and the support check (which reports why the others stay on the host). Pure
// functions of the graph; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "npu/compiler/graph.h"

namespace npu::compiler {

/// Why recurrence node `n` is not unrolled ("" when it is): it needs float32 gates G of
/// static shape, constant R (and B, P), sequence_lens absent or a constant equal to
/// seq_length for every batch entry, activations the device computes (every ONNX one but
/// ThresholdedRelu), at most kMaxUnrolledSteps steps, and shapes and attributes that agree.
std::string unroll_recurrence_reason(const Graph& g, const Node& n);

/// The longest sequence unroll-recurrence unrolls: each step adds about ten device ops per
/// direction, so the graph (and its command buffer) stays bounded.
inline constexpr int64_t kMaxUnrolledSteps = 512;

}  // namespace npu::compiler

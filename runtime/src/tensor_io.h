// Tensor I/O: a tensor's bytes in its buffer location and the checks on the inputs a run is
// given.
//
// Semantics: a tensor with a location (format::TensorLocation) lives at an offset of one of
// the model's buffers, stored in plain C order, with explicit byte strides, or — a 4-d NCHW
// tensor — channels-last (NHWC). write_tensor()/read_tensor() convert between that storage
// and a C-order array; a dense plain tensor is one copy. Shapes with symbolic dims
// resolve through the run's bindings, which bind_inputs() sets from the given inputs (a
// bound dim of a tensor stored in a buffer must equal the size the location was compiled
// for). Errors name the model, the tensor and the buffer.
//
// Threading and lifetime: as RunState (one run at a time; nothing kept beyond the call but
// the host copies the run keeps in RunState::values).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_state.h"
#include "npu/expected.h"
#include "npu/format/npy.h"
#include "npu/format/package.h"

namespace npu::runtime {

/// Whether `t` (which has a location) is stored densely in plain C order.
bool dense_plain(const format::TensorInfo& t);

/// The size dim `i` of `shape` has in `t`'s location when the other dims are their fixed
/// sizes (symbolic ones count 1): the size the device code was compiled for. 0 when unknown.
int64_t compiled_dim(const format::TensorInfo& t, const std::vector<format::Dim>& shape, size_t i);

/// Byte offset (inside the location) of each logical element of `t`, in C order of `shape`.
Expected<std::vector<uint64_t>> element_offsets(const format::TensorInfo& t, const Shape& shape);

/// `t`'s shape with its symbolic dims bound by the run.
Expected<Shape> resolve(const RunState& run, const format::TensorInfo& t);

/// Writes `a` (C order) into `t`'s location.
Expected<void> write_tensor(RunState& run, const format::TensorInfo& t, const format::ArrayView& a);
/// Reads `t` from its location (shape resolved by the run).
Expected<format::NpyArray> read_tensor(RunState& run, const format::TensorInfo& t);

/// The current value of a tensor: its host copy, else a copy of the given input, else read
/// from its location (either copy is kept).
Expected<const format::NpyArray*> value(RunState& run, const std::string& name);

/// Checks `inputs` against the model's inputs (none unknown, none missing, dtypes, shapes,
/// symbolic dims bound consistently and to the compiled sizes), then writes each into its
/// location; `inputs` must outlive the run (value() copies an input when it is needed).
Expected<void> bind_inputs(RunState& run, const Views& inputs);

}  // namespace npu::runtime

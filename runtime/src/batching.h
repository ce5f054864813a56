// Per-batch slicing: a batch larger than the one the model was compiled for, run slice by
// slice with the outputs concatenated along dim 0 — for Model::run()'s dynamic batches and
// for run_batched() (npu/runtime/batch.h).
//
// Semantics: run_in_slices() cuts each input named in the plan into slices of `per_slice`
// rows along dim 0 (the other inputs are passed whole), runs the graph once per slice
// (run_once) and appends each output's rows in slice order. An output whose package shape
// has no symbolic dim 0 fails when plan.dynamic_outputs is set (Model::run: the model's
// outputs do not grow with the batch); otherwise every output with a dim 0 is concatenated.
// ModelState::stats ends as the sum over the slices (segments in order, cycles and busy
// cycles summed, wall time of the whole), also after a failure, whose message gets the
// slice's rows appended: "... (batch rows 2..3)".
//
// Threading and lifetime: as Model::run().
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "model_state.h"
#include "npu/expected.h"

namespace npu::runtime {

struct SlicePlan {
  std::set<std::string> batched;  // the inputs cut along dim 0
  int64_t given = 0;              // their rows
  int64_t per_slice = 0;          // rows per run; divides `given`
  bool dynamic_outputs = true;    // outputs must have a symbolic dim 0
};

/// Runs the graph once per slice of the plan (see above).
/// `options` with `deadline` set from `timeout` (the earlier of the two), so one limit covers
/// every slice and segment of a run.
RunOptions with_deadline(const RunOptions& options);

Expected<Arrays> run_in_slices(ModelState& m, const Views& inputs, const SlicePlan& plan,
                               const RunOptions& options);

/// The plan of a dynamic batch: the inputs whose dim 0 is symbolic and given with the rows
/// of the first such input stored in a device buffer, sliced by the batch that buffer was
/// compiled for. per_slice 0: no slicing applies (no such input, or the batch is compiled
/// size or not a multiple of it: run_once decides).
SlicePlan dynamic_batch_plan(const ModelState& m, const Views& inputs);

/// Model::run() and Model::run_views(): a dynamic batch slice by slice, else one run.
Expected<Arrays> run_model(ModelState& m, const Views& inputs, const RunOptions& options);

}  // namespace npu::runtime

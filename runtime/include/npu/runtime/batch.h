// run_batched(): a Model run on a batch of any size, sliced to its input's batch — the runtime's
// calibration runner (npu-compile --quantize int8 --calibration FILE.npy runs the
// calibration graph with it) and the way to push a large data set through a model compiled
// for a small fixed batch.
//
// Semantics: `data` is bound to the model input `input`, the model's only input (another
// input fails as missing, as in Model::run()). float64 data for a float32 input is converted first
// (NumPy's default dtype); any other dtype must match. When the input's leading dim is symbolic,
// this is Model::run() (which slices a dynamic batch itself). When it is fixed at B, `data` must
// have the input's trailing dims and any positive number of rows; the model then runs on
// rows [0, B), [B, 2B), ... through the same per-batch slicing as a dynamic batch and every
// output is concatenated along dim 0 in row order (Model::last_stats() sums the slices). When
// the rows are not a multiple of B, the last slice is completed with the first rows of `data`
// and their results are dropped from every output (an output without a batch dim is then an
// error).
//
// Errors name the model (Model::name()): "cal.npy: dtype int8, but input 'x' is float32",
// "cal.npy: shape [3, 5] does not match input 'x' [2, 4] (any batch of its rows)",
// and run errors with the failing slice's rows.
//
// Threading and lifetime: as Model::run(); `model` is used for the call only.
#pragma once

#include <map>
#include <string>

#include "npu/expected.h"
#include "npu/format/npy.h"
#include "npu/runtime/model.h"

namespace npu {

/// Runs `model` on `data` bound to `input` in slices of the input's batch (see above) and
/// returns every graph output with the slices' rows concatenated.
Expected<std::map<std::string, format::NpyArray>> run_batched(Model& model,
                                                              const std::string& input,
                                                              const format::NpyArray& data,
                                                              const RunOptions& options = {});

}  // namespace npu

// The activations of the recurrent layers as ONNX defines them: RNN applies f, GRU f and g,
// LSTM f, g and h, per direction. The `activations` attribute names them (one list per
// direction, or one list both directions share; names matched without regard to case),
// `activation_alpha` / `activation_beta` are consumed in order by the activations that take
// them, and missing parameters take the defaults of the ONNX operators of those names. Written
// once for the host RNN/GRU/LSTM (ops/src/recurrent.cpp) and the compiler's unroll-recurrence
// pass, which builds the same functions from device operators. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "npu/expected.h"

namespace npu::ops {

/// One activation of a recurrent layer with its parameters (unused ones are 0).
struct RecurrentActivation {
  enum class Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,           // alpha * x + beta
    kLeakyRelu,        // alpha
    kThresholdedRelu,  // x > alpha ? x : 0
    kScaledTanh,       // alpha * tanh(beta * x)
    kHardSigmoid,      // clamp(alpha * x + beta, 0, 1)
    kElu,              // alpha
    kSoftsign,         // x / (1 + |x|)
    kSoftplus
  };
  Kind kind = Kind::kTanh;
  double alpha = 0, beta = 0;
};

/// The activations of an RNN, GRU or LSTM call (or of npu.RNNRecurrence, GRURecurrence,
/// LSTMRecurrence) with `attributes` as npu::ops::run() takes them and `dirs` (1 or 2)
/// directions: 1, 2 or 3 per direction, direction 0's first. Fails with the host op's error
/// for an unknown activation or a list of the wrong length.
Expected<std::vector<RecurrentActivation>> recurrent_activations(std::string_view op_type,
                                                                 std::string_view attributes,
                                                                 int64_t dirs);

}  // namespace npu::ops

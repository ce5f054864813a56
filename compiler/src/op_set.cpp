// The supported operator table (docs/compiler.md lists the same set).
#include "npu/compiler/op_set.h"

namespace npu::compiler {

const std::vector<OpInfo>& supported_ops() {
  static const std::vector<OpInfo> ops = {
      {"Conv", OpClass::kConv},
      {"ConvInteger", OpClass::kConv},
      {"QLinearConv", OpClass::kConv},
      {"MatMul", OpClass::kMatMul},
      {"Gemm", OpClass::kMatMul},
      {"MatMulInteger", OpClass::kMatMul},
      {"QLinearMatMul", OpClass::kMatMul},
      {"Add", OpClass::kEltwise},
      {"Sub", OpClass::kEltwise},
      {"Mul", OpClass::kEltwise},
      {"Div", OpClass::kEltwise},
      {"Max", OpClass::kEltwise},
      {"Min", OpClass::kEltwise},
      {"Pow", OpClass::kEltwise},
      {"PRelu", OpClass::kEltwise},
      {"Relu", OpClass::kActivation},
      {"LeakyRelu", OpClass::kActivation},
      {"Elu", OpClass::kActivation},
      {"Clip", OpClass::kActivation},
      {"Sigmoid", OpClass::kActivation},
      {"Tanh", OpClass::kActivation},
      {"HardSigmoid", OpClass::kActivation},
      {"HardSwish", OpClass::kActivation},
      {"Softplus", OpClass::kActivation},
      {"Erf", OpClass::kActivation},
      {"Exp", OpClass::kActivation},
      {"Log", OpClass::kActivation},
      {"Sqrt", OpClass::kActivation},
      {"Abs", OpClass::kActivation},
      {"Neg", OpClass::kActivation},
      {"Reciprocal", OpClass::kActivation},
      {"MaxPool", OpClass::kPool},
      {"AveragePool", OpClass::kPool},
      {"GlobalAveragePool", OpClass::kPool},
      {"GlobalMaxPool", OpClass::kPool},
      {"Softmax", OpClass::kSoftmax},
      {"LogSoftmax", OpClass::kSoftmax},
      {"BatchNormalization", OpClass::kNorm},
      {"QuantizeLinear", OpClass::kQuant},
      {"DequantizeLinear", OpClass::kQuant},
      {"ReduceMean", OpClass::kReduce},
      {"ReduceSum", OpClass::kReduce},
      {"ReduceMax", OpClass::kReduce},
      {"ReduceMin", OpClass::kReduce},
      {"Transpose", OpClass::kTranspose},
      {"Concat", OpClass::kMove},
      {"Pad", OpClass::kMove},
      {"Reshape", OpClass::kMove},
      {"Flatten", OpClass::kMove},
      {"Squeeze", OpClass::kMove},
      {"Unsqueeze", OpClass::kMove},
      {"Identity", OpClass::kNoOp},
      {"Dropout", OpClass::kNoOp},
      // Host only: shape arithmetic (usually folded away) and small helpers.
      {"Shape", OpClass::kHostOnly},
      {"Size", OpClass::kHostOnly},
      {"Gather", OpClass::kHostOnly},
      {"Slice", OpClass::kHostOnly},
      {"Split", OpClass::kHostOnly},
      {"Cast", OpClass::kHostOnly},
      {"Range", OpClass::kHostOnly},
      {"ConstantOfShape", OpClass::kHostOnly},
      {"Expand", OpClass::kHostOnly},
      {"Where", OpClass::kHostOnly},
      {"Equal", OpClass::kHostOnly},
      {"Less", OpClass::kHostOnly},
      {"Greater", OpClass::kHostOnly},
      {"Not", OpClass::kHostOnly},
      {"Floor", OpClass::kHostOnly},
      {"Ceil", OpClass::kHostOnly},
      {"ReduceProd", OpClass::kHostOnly},
  };
  return ops;
}

const OpInfo* find_op(std::string_view op_type) {
  for (const OpInfo& op : supported_ops()) {
    if (op.op_type == op_type) return &op;
  }
  return nullptr;
}

}  // namespace npu::compiler

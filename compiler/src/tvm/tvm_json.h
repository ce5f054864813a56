// Private: the TVM JSON graph document (codegen_json.h / json_node.h / json_runtime.h of
// apache/tvm) parsed and checked for structure, before any kernel is translated: node kinds,
// entries [node, index, version], arg_nodes, heads, node_row_ptr, each node's recorded output
// types ("shape"/"dtype" in either encoding), num_inputs/num_outputs, and a topological order
// of the kernels (a cycle is an error). Operator attributes stay undecoded JSON until the
// kernel's schema is known (decode_attr). Errors are one line without the source prefix.
// Pure functions over values; a Document owns its data and shares nothing.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npu/compiler/graph.h"
#include "npu/expected.h"
#include "npu/ops/registry.h"

namespace npu::compiler::tvm {

/// A reference to output `index` of node `node` (`version` is read and ignored, as TVM does).
struct Entry {
  uint32_t node = 0, index = 0;
};

/// A recorded output type: the dtype name as TVM writes it and the dims (-1: dynamic).
struct TensorSig {
  std::string dtype;
  std::vector<int64_t> dims;
};

struct JsonNode {
  std::string op;    // "input", "const" or "kernel"
  std::string name;  // the parameter / constant name, or the kernel's composite / operator
  std::vector<Entry> inputs;
  std::vector<TensorSig> outputs;               // from the "shape" and "dtype" attributes
  std::map<std::string, nlohmann::json> attrs;  // every other attribute, undecoded
};

struct Document {
  std::vector<JsonNode> nodes;
  std::vector<uint32_t> arg_nodes;
  std::vector<Entry> heads;
  std::vector<uint32_t> kernel_order;  // kernel node ids, each after the nodes it reads
};

/// "node 3 (example_npu.relu)", "input node 0 'x'", "const node 2 'c0'".
std::string label(const Document& d, uint32_t id);

/// Parses and checks the document.
Expected<Document> parse(std::string_view text);

/// Decodes attribute `v` as the schema's type, from either encoding (legacy: a list holding
/// one list of strings). nullopt for an unset value (TVM writes None as "" / [[""]]).
/// `where` prefixes errors.
Expected<std::optional<AttrValue>> decode_attr(const nlohmann::json& v, const ops::AttrSchema& s,
                                               const std::string& where);

}  // namespace npu::compiler::tvm

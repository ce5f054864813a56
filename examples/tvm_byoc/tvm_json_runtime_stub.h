// ===========================================================================================
//  STUB — NOT TVM. A stand-in of ours for the part of Apache TVM that a BYOC JSON runtime
//  module is written against, so that this example builds and runs in our CI without TVM.
// ===========================================================================================
//
// In TVM the same names live in <dlpack/dlpack.h> (DLTensor, DLDataType) and in
// src/runtime/extra/contrib/json/json_runtime.h (JSONRuntimeBase: the graph JSON parsed into
// nodes, input_var_eid_, outputs_, const_idx_, data_entry_, EntryID(); Init(consts) called once
// with the constants, Run() per call after SetInputOutputBuffers bound the call's DLTensors to
// data_entry_). The fields here have the same names and meaning, reduced to what
// npu_json_runtime.cc uses; porting the runtime into a TVM tree means deleting this header and
// including TVM's (the runtime class body stays). Only the graph's leaves, heads and
// node_row_ptr are read here — kernels are libnpuc's business.
//
// Threading: like TVM's JSONRuntimeBase, one module instance is not safe to Run() from several
// threads at once. Lifetime: data_entry_ points at the caller's buffers for one call.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tvm_stub {

// ---- dlpack (the fields this example uses, same names as <dlpack/dlpack.h>) ----
enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2 };
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
};

// ---- json_runtime.h's JSONRuntimeBase, reduced ----
struct JSONGraphNodeEntry {
  uint32_t id_ = 0, index_ = 0;
};

class JSONRuntimeBase {
 public:
  JSONRuntimeBase(std::string symbol_name, std::string graph_json,
                  std::vector<std::string> const_names)
      : symbol_name_(std::move(symbol_name)),
        graph_json_(std::move(graph_json)),
        const_names_(std::move(const_names)) {
    LoadGraph();
  }
  virtual ~JSONRuntimeBase() = default;

  virtual const char* kind() const = 0;
  /// Called once with the constants, in const_names_ order.
  virtual void Init(const std::vector<const DLTensor*>& consts) = 0;
  /// Runs the graph on the buffers bound to data_entry_.
  virtual void Run() = 0;

  /// What TVM's packed function for the symbol does: binds the call's arguments (the inputs in
  /// arg_nodes order, then one buffer per head) and runs.
  void Invoke(const std::vector<DLTensor*>& args) {
    if (args.size() != input_var_eid_.size() + outputs_.size()) {
      throw std::invalid_argument(symbol_name_ + ": expected " +
                                  std::to_string(input_var_eid_.size() + outputs_.size()) +
                                  " arguments");
    }
    for (size_t i = 0; i < args.size(); ++i) {
      const uint32_t eid = i < input_var_eid_.size() ? input_var_eid_[i]
                                                     : EntryID(outputs_[i - input_var_eid_.size()]);
      data_entry_[eid] = args[i];
    }
    Run();
  }

 protected:
  uint32_t EntryID(uint32_t nid, uint32_t index) const { return node_row_ptr_[nid] + index; }
  uint32_t EntryID(const JSONGraphNodeEntry& e) const { return EntryID(e.id_, e.index_); }

  std::string symbol_name_;
  std::string graph_json_;
  std::vector<std::string> const_names_;
  std::vector<std::string> input_names_;  // the stub's addition: input node names, in order
  std::vector<uint32_t> node_row_ptr_;
  std::vector<uint32_t> input_var_eid_;
  std::vector<uint32_t> const_idx_;
  std::vector<JSONGraphNodeEntry> outputs_;
  std::vector<DLTensor*> data_entry_;

 private:
  void LoadGraph() {
    const auto root = nlohmann::json::parse(graph_json_);
    const auto& nodes = root.at("nodes");
    node_row_ptr_ = {0};
    for (const auto& n : nodes) {
      const auto& shape = n.at("attrs").at("shape");
      // Legacy graphs wrap the shape list once more ([[[...]]]).
      const bool legacy =
          shape.size() == 1 && shape[0].is_array() && !shape[0].empty() && shape[0][0].is_array();
      node_row_ptr_.push_back(node_row_ptr_.back() +
                              static_cast<uint32_t>(legacy ? shape[0].size() : shape.size()));
    }
    for (const auto& a : root.at("arg_nodes")) {
      const auto nid = a.get<uint32_t>();
      if (nodes.at(nid).at("op") == "input") {
        input_var_eid_.push_back(EntryID(nid, 0));
        input_names_.push_back(nodes.at(nid).at("name").get<std::string>());
      } else {
        const_idx_.push_back(nid);
      }
    }
    for (const auto& h : root.at("heads")) {
      outputs_.push_back({h.at(0).get<uint32_t>(), h.at(1).get<uint32_t>()});
    }
    data_entry_.assign(node_row_ptr_.back(), nullptr);
  }
};

}  // namespace tvm_stub

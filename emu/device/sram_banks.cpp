// The lanes' SRAM banks (sram_banks.h).
#include "sram_banks.h"

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

#include "npu/isa/fields.def"
#include "piece_map.h"

namespace npu::emu {

namespace {

/// Which bank holds the current bytes of each SRAM range; bytes no command of the stretch
/// wrote are in bank 0.
class BankMap {
 public:
  /// The one bank all of [b, e) is in, or -1 when it spans both.
  int uniform(uint64_t b, uint64_t e) const {
    int bank = -1;
    bool both = false;
    auto take = [&](int here) {
      both = both || (bank >= 0 && bank != here);
      bank = here;
    };
    uint64_t at = b;
    banks_.visit(b, e, [&](uint64_t pb, uint64_t pe, uint8_t in) {
      if (pb > at) take(0);  // a gap before it
      take(in);
      at = pe;
    });
    if (at < e) take(0);
    return both ? -1 : bank;
  }

  void assign(uint64_t b, uint64_t e, uint8_t bank) { banks_.assign(b, e, bank); }

  /// f(begin, end, bank) for every range a command wrote, in address order.
  template <class F>
  void for_each(F&& f) const {
    banks_.for_each(f);
  }

 private:
  PieceMap<uint8_t> banks_;
};

bool overlaps(const LaneRegion& a, const LaneRegion& b) {
  return a.sram == b.sram && a.begin < b.end && b.begin < a.end;
}

/// A strided 4-D view covers its range when, by increasing stride, each dimension of more than
/// one element steps over exactly the ones before it.
bool view_is_dense(const uint32_t (&shape)[4], const npu_vtensor& t) {
  uint64_t covered = 1;  // elements of the dimensions taken so far
  bool taken[4] = {};
  for (int n = 0; n < 4; ++n) {
    int pick = -1;
    for (int i = 0; i < 4; ++i) {
      if (taken[i] || shape[i] <= 1) continue;
      if (pick < 0 || t.stride[i] < t.stride[pick]) pick = i;
    }
    if (pick < 0) return true;
    if (t.stride[pick] != covered) return false;
    taken[pick] = true;
    covered *= shape[pick];
  }
  return true;
}

/// A field as a 32-bit address, or nullptr for a field of another type.
template <class T>
uint32_t* address32(T& field) {
  if constexpr (std::is_same_v<T, __u32>) {
    return &field;
  } else {
    return nullptr;
  }
}

}  // namespace

bool writes_every_byte(const npu_cmd& cmd, const isa::Region& r) {
  switch (cmd.hdr.opcode) {
    case NPU_OP_DMA_LOAD: {
      const npu_cmd_dma& c = cmd.dma;
      const uint64_t px = uint64_t{c.size[0]} + c.pad_before[0] + c.pad_after[0];
      const uint64_t py = uint64_t{c.size[1]} + c.pad_before[1] + c.pad_after[1];
      const uint64_t pz = uint64_t{c.size[2]} + c.pad_before[2] + c.pad_after[2];
      return (py <= 1 || c.sram_stride[0] == px * c.elem_size) &&
             (pz <= 1 || c.sram_stride[1] == py * px * c.elem_size);
    }
    case NPU_OP_MATMUL: {
      const npu_cmd_matmul& c = cmd.matmul;
      return c.batch <= 1 || uint64_t{c.out_batch_stride} == uint64_t{c.m} * c.n;
    }
    case NPU_OP_ELTWISE:
      return view_is_dense(cmd.eltwise.shape, cmd.eltwise.out);
    case NPU_OP_ACTIVATION:
      return view_is_dense(cmd.activation.shape, cmd.activation.out);
    case NPU_OP_CONV2D:
    case NPU_OP_POOL:
    case NPU_OP_SOFTMAX:
    case NPU_OP_SCALE_SHIFT:
    case NPU_OP_QUANTIZE:
    case NPU_OP_DEQUANTIZE:
    case NPU_OP_REQUANTIZE:
    case NPU_OP_TRANSPOSE:
    case NPU_OP_REDUCE:
    case NPU_OP_MOMENTS:
      return (r.access & isa::kWrite) != 0;  // dense outputs
    default:
      return false;
  }
}

uint32_t* sram_address_field(npu_cmd& cmd, const char* field) {
  const std::string_view name = field;
  // The 32-bit address fields of the command's payload (npu/isa/fields.def): its SRAM operands
  // (a DMA's DRAM address is the 64-bit one).
#define NPU_SRAM_ADDRESS(P, MEMBER, TYPE, COUNT, ENUM, STYLE, ...) \
  if (std::string_view(#STYLE) == "Addr" && name == #MEMBER) return address32(cmd.P.MEMBER);
#define NPU_SKIP(...)
  switch (cmd.hdr.opcode) {
#define NPU_CONTROL(VALUE, ID, ...)
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, ...) \
  case NPU_OP_##ID:                                          \
    NPU_FIELDS_##PAYLOAD(NPU_SRAM_ADDRESS, NPU_SKIP) break;
#include "npu/isa/opcodes.def"
    default:
      break;
  }
#undef NPU_SKIP
#undef NPU_SRAM_ADDRESS
  return nullptr;
}

std::optional<RenamedStretch> rename_sram(std::vector<npu_cmd> cmds,
                                          std::span<const LaneCommand> lcmds,
                                          std::span<const LaneRegion> regions, uint64_t stride,
                                          std::span<const uint8_t> lane_of) {
  RenamedStretch out;
  out.regions.assign(regions.begin(), regions.end());
  out.bank.assign(regions.size(), 0);
  BankMap map;
  bool moved = false;
  std::vector<isa::Region> operands;  // of the command, in the order of its LaneRegions
  for (uint32_t i = 0; i < lcmds.size(); ++i) {
    const LaneCommand& lc = lcmds[i];
    const std::span<const LaneRegion> rs = regions.subspan(lc.first, lc.count);
    operands.clear();
    if (!isa::command_regions(cmds[i], operands) || operands.size() != rs.size())
      return std::nullopt;
    // Every bank is chosen from the map as it stands before the command.
    for (uint32_t k = 0; k < rs.size(); ++k) {
      const LaneRegion& r = rs[k];
      if (!r.sram || r.end <= r.begin) continue;
      bool fresh = r.write && writes_every_byte(cmds[i], operands[k]);
      for (uint32_t o = 0; fresh && o < rs.size(); ++o) {
        if (o != k && overlaps(r, rs[o])) fresh = false;  // bytes it also reads or writes
      }
      const int bank = fresh ? lane_of[i] : map.uniform(r.begin, r.end);
      if (bank < 0) return std::nullopt;  // its bytes lie in both banks
      out.bank[lc.first + k] = static_cast<uint8_t>(bank);
      moved = moved || bank != 0;
    }
    for (uint32_t k = 0; k < rs.size(); ++k) {
      const LaneRegion& r = rs[k];
      if (r.sram && r.write && r.end > r.begin) map.assign(r.begin, r.end, out.bank[lc.first + k]);
    }
    // The command's operands moved to their banks (the fields of its operands in bank 1).
    for (uint32_t k = 0; k < rs.size(); ++k) {
      if (out.bank[lc.first + k] == 0) continue;
      LaneRegion& r = out.regions[lc.first + k];
      uint32_t* field = sram_address_field(cmds[i], operands[k].field);
      if (field == nullptr || r.end + stride > UINT32_MAX) return std::nullopt;
      *field = static_cast<uint32_t>(*field + stride);
      r.begin += stride;
      r.end += stride;
    }
  }
  if (!moved) return std::nullopt;
  out.cmds = std::move(cmds);
  return out;
}

std::vector<SramCopy> sram_copy_back(std::span<const LaneCommand> lcmds,
                                     std::span<const LaneRegion> regions,
                                     std::span<const uint8_t> bank, std::span<const uint8_t> ran) {
  BankMap map;
  for (uint32_t i = 0; i < lcmds.size(); ++i) {
    if (ran[i] == 0) continue;
    for (uint32_t k = lcmds[i].first; k < lcmds[i].first + lcmds[i].count; ++k) {
      const LaneRegion& r = regions[k];
      if (r.sram && r.write && r.end > r.begin) map.assign(r.begin, r.end, bank[k]);
    }
  }
  std::vector<SramCopy> out;
  map.for_each([&](uint64_t b, uint64_t e, uint8_t in) {
    if (in == 0) return;
    if (!out.empty() && out.back().at + out.back().bytes == b) {
      out.back().bytes += e - b;  // one copy for neighbours
    } else {
      out.push_back({b, e - b});
    }
  });
  return out;
}

}  // namespace npu::emu

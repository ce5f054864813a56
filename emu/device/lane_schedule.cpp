// The lanes' list schedule (lane_schedule.h).
#include "lane_schedule.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include "piece_map.h"

namespace npu::emu {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

/// What a conflict across the lanes adds to a command's start, in the costs' nanoseconds.
constexpr uint64_t kHandoff = 10'000;

/// Who touched a byte range last, as indices of regions: its last writers (one, or several
/// strided writes of rows that do not meet: a compiler's slices of output channels, stored to
/// one tensor), the reads since (all of them until writes made after the last read cover every
/// byte again), and of the strided writers those made since the last read.
struct Access {
  std::vector<uint32_t> writers;
  std::vector<uint32_t> readers;
  std::vector<uint32_t> fresh;
};

/// Regions with the offset of each one's rows in its pitch (begin % pitch, computed once: 64-bit
/// divisions at every check made the conflict graph of ResNet-50 take 37 ms instead of 15).
struct Rows {
  std::span<const LaneRegion> regions;
  std::vector<uint32_t> phase;
  explicit Rows(std::span<const LaneRegion> r) : regions(r), phase(r.size(), 0) {
    for (size_t k = 0; k < r.size(); ++k)
      if (r[k].pitch != 0) phase[k] = static_cast<uint32_t>(r[k].begin % r[k].pitch);
  }
  /// Whether regions a and b, which share a piece, have a byte in common: always, unless both
  /// are rows of the same pitch that never meet.
  bool meet(uint32_t a, uint32_t b) const {
    const LaneRegion& x = regions[a];
    const LaneRegion& y = regions[b];
    if (x.pitch == 0 || x.pitch != y.pitch) return true;
    const uint32_t d = phase[b] >= phase[a] ? phase[b] - phase[a] : phase[b] + x.pitch - phase[a];
    return d < x.width || uint64_t{d} + y.width > x.pitch;
  }
  /// Whether a and b are the same rows (pitch, width and phase).
  bool same(uint32_t a, uint32_t b) const {
    return regions[a].pitch == regions[b].pitch && regions[a].width == regions[b].width &&
           phase[a] == phase[b];
  }
};

/// Whether the rows of `rows` (of one pitch, none meeting another, each spanning the piece
/// [b, e)) have every byte of it: their widths within the piece's offsets add up to its length.
bool cover_piece(std::span<const uint32_t> rows, const Rows& at, uint64_t b, uint64_t e) {
  if (rows.empty()) return false;
  const uint64_t pitch = at.regions[rows[0]].pitch;
  const uint64_t from = b % pitch, len = std::min(e - b, pitch);
  uint64_t covered = 0;
  for (const uint32_t r : rows) {
    if (at.regions[r].pitch != pitch) return false;
    // The row's offsets [o, o + width), also one pitch on (the piece's may run past it).
    for (const uint64_t lo : {uint64_t{at.phase[r]}, at.phase[r] + pitch}) {
      const uint64_t hi = lo + at.regions[r].width;
      const uint64_t l = std::max(lo, from), h = std::min(hi, from + len);
      if (h > l) covered += h - l;
    }
  }
  return covered >= len;
}

/// Who touched each byte range of one address space (SRAM offsets or host addresses).
using AccessMap = PieceMap<Access>;

/// The command that last wrote a byte range (kNone: none of the stretch).
struct Writer {
  uint32_t cmd = kNone;
};

}  // namespace

LaneConflicts lane_conflicts(std::span<const LaneCommand> cmds, std::span<const LaneRegion> regions,
                             bool renamed_sram) {
  LaneConflicts out;
  out.first.reserve(cmds.size() + 1);
  AccessMap maps[2];  // [0] host DRAM, [1] SRAM
  std::vector<uint32_t> found;
  std::vector<uint32_t> seen(cmds.size(), kNone);  // the last command that found each one
  auto find = [&](uint32_t i, uint32_t j) {
    if (j != i && seen[j] != i) {
      seen[j] = i;
      found.push_back(j);
    }
  };
  std::vector<uint32_t> cmd_of(regions.size(), kNone);  // the command of each region
  const Rows rows(regions);
  for (uint32_t i = 0; i < cmds.size(); ++i)
    for (uint32_t k = cmds[i].first; k < cmds[i].first + cmds[i].count; ++k) cmd_of[k] = i;
  for (uint32_t i = 0; i < cmds.size(); ++i) {
    out.first.push_back(static_cast<uint32_t>(out.preds.size()));
    const LaneCommand& c = cmds[i];
    found.clear();
    // What it conflicts with: the state before it (reads: the last writers of its bytes;
    // writes: also the reads since). Then its reads, then its writes, become the state.
    for (uint32_t k = c.first; k < c.first + c.count; ++k) {
      const LaneRegion& r = regions[k];
      if (r.end <= r.begin || (renamed_sram && r.sram && r.write)) continue;
      maps[r.sram ? 1 : 0].cover(r.begin, r.end, [&](uint64_t, uint64_t, Access& p) {
        for (const uint32_t w : p.writers)
          if (rows.meet(k, w)) find(i, cmd_of[w]);
        if (r.write)
          for (const uint32_t q : p.readers)
            if (rows.meet(k, q)) find(i, cmd_of[q]);
      });
    }
    for (uint32_t k = c.first; k < c.first + c.count; ++k) {
      const LaneRegion& r = regions[k];
      if (r.end <= r.begin || r.write) continue;
      maps[r.sram ? 1 : 0].cover(r.begin, r.end, [&](uint64_t, uint64_t, Access& p) {
        if (p.readers.empty() || p.readers.back() != k) p.readers.push_back(k);
        p.fresh.clear();
      });
    }
    for (uint32_t k = c.first; k < c.first + c.count; ++k) {
      const LaneRegion& r = regions[k];
      if (r.end <= r.begin || !r.write) continue;
      if (r.pitch == 0) {
        maps[r.sram ? 1 : 0].assign(r.begin, r.end, Access{{k}, {}, {}});
        continue;
      }
      // Rows: they replace the writers of the same rows; with the rows written since the last
      // read covering every byte, those are all the writers and no read is left to wait for.
      maps[r.sram ? 1 : 0].cover(r.begin, r.end, [&](uint64_t pb, uint64_t pe, Access& p) {
        std::erase_if(p.writers, [&](uint32_t w) { return rows.same(k, w); });
        p.writers.push_back(k);
        std::erase_if(p.fresh, [&](uint32_t w) { return rows.meet(k, w); });
        p.fresh.push_back(k);
        if (cover_piece(p.fresh, rows, pb, pe)) {
          p.writers = p.fresh;
          p.readers.clear();
        }
      });
    }
    std::sort(found.begin(), found.end());
    out.preds.insert(out.preds.end(), found.begin(), found.end());
  }
  out.first.push_back(static_cast<uint32_t>(out.preds.size()));
  return out;
}

LaneSchedule schedule_lanes(std::span<const LaneCommand> cmds,
                            std::span<const LaneRegion> regions) {
  const auto n = static_cast<uint32_t>(cmds.size());
  const LaneConflicts g = lane_conflicts(cmds, regions);
  // Successors, and each command's bottom level: its cost plus the longest chain after it.
  std::vector<uint32_t> succ_first(n + 1, 0), succ(g.preds.size());
  for (const uint32_t j : g.preds) ++succ_first[j + 1];
  for (uint32_t i = 0; i < n; ++i) succ_first[i + 1] += succ_first[i];
  {
    std::vector<uint32_t> at(succ_first.begin(), succ_first.end() - 1);
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t k = g.first[i]; k < g.first[i + 1]; ++k) succ[at[g.preds[k]]++] = i;
  }
  std::vector<uint64_t> level(n, 0);
  for (uint32_t i = n; i-- > 0;) {
    uint64_t after = 0;
    for (uint32_t k = succ_first[i]; k < succ_first[i + 1]; ++k)
      after = std::max(after, level[succ[k]]);
    level[i] = cmds[i].cost + after;
  }

  // The commands by decreasing level (a topological order: a command's level exceeds its
  // successors'; equal levels, of zero-cost commands, by index), each appended to the lane
  // where it would end first: after the lane's last command and its conflicts, plus
  // kHandoff for a conflict on the other lane (the wait's hand-off and the bytes pulled
  // across the cores, which keeps chains on one lane when that costs little).
  std::vector<uint32_t> by_level(n);
  for (uint32_t i = 0; i < n; ++i) by_level[i] = i;
  std::stable_sort(by_level.begin(), by_level.end(),
                   [&](uint32_t a, uint32_t b) { return level[a] > level[b]; });
  LaneSchedule out;
  std::vector<uint32_t> lane_of(n, 0), pos(n, 0);
  std::vector<uint64_t> end(n, 0);
  uint64_t free_at[2] = {0, 0};
  for (const uint32_t i : by_level) {
    uint64_t best_end = UINT64_MAX;
    int lane = 0;
    for (int l = 0; l < 2; ++l) {
      uint64_t start = free_at[l];
      for (uint32_t k = g.first[i]; k < g.first[i + 1]; ++k) {
        const uint32_t j = g.preds[k];
        start = std::max(start, end[j] + (static_cast<int>(lane_of[j]) != l ? kHandoff : 0));
      }
      if (start + cmds[i].cost < best_end) best_end = start + cmds[i].cost, lane = l;
    }
    uint32_t wait = 0;  // the other lane's commands that must have completed
    for (uint32_t k = g.first[i]; k < g.first[i + 1]; ++k) {
      const uint32_t j = g.preds[k];
      if (static_cast<int>(lane_of[j]) != lane) wait = std::max(wait, pos[j] + 1);
    }
    lane_of[i] = static_cast<uint32_t>(lane);
    pos[i] = static_cast<uint32_t>(out.order[lane].size());
    end[i] = free_at[lane] = best_end;
    out.order[lane].push_back(i);
    out.wait[lane].push_back(wait);
  }
  out.makespan = std::max(free_at[0], free_at[1]);
  return out;
}

std::vector<uint8_t> split_lanes(std::span<const LaneCommand> cmds,
                                 std::span<const LaneRegion> regions) {
  const auto n = static_cast<uint32_t>(cmds.size());
  // Who wrote what each command reads: the first reader of each command's SRAM writes, the
  // writer of a matrix command's weights and of a store's bytes (the first piece with one).
  std::vector<uint32_t> first_reader(n, kNone), writer_of(n, kNone);
  PieceMap<Writer> sram;
  for (uint32_t i = 0; i < n; ++i) {
    const LaneCommand& c = cmds[i];
    for (uint32_t k = 0; k < c.count; ++k) {
      const LaneRegion& r = regions[c.first + k];
      if (!r.sram || r.write || r.end <= r.begin) continue;
      uint32_t w = kNone;
      sram.visit(r.begin, r.end, [&](uint64_t, uint64_t, const Writer& p) {
        if (w == kNone) w = p.cmd;
      });
      if (w == kNone) continue;
      if (first_reader[w] == kNone) first_reader[w] = i;
      const bool weights = c.role == LaneRole::Compute && static_cast<int32_t>(k) == c.weights;
      if (weights || c.role == LaneRole::Store) writer_of[i] = w;
    }
    for (uint32_t k = 0; k < c.count; ++k) {
      const LaneRegion& r = regions[c.first + k];
      if (r.sram && r.write && r.end > r.begin) sram.assign(r.begin, r.end, Writer{i});
    }
  }
  // Each command's group: a matrix command's is the writer of its weights (else itself), a
  // load's that of the compute command that first reads it, a store's that of what it stores.
  std::vector<uint32_t> group(n);
  for (uint32_t i = 0; i < n; ++i)
    group[i] = cmds[i].role == LaneRole::Compute && writer_of[i] != kNone ? writer_of[i] : i;
  // A load no compute command reads (a copy through SRAM) goes with an earlier load of the same
  // bytes into the same SRAM, so that the load memo can skip it (load_memo.h).
  std::map<std::vector<std::pair<uint64_t, uint64_t>>, uint32_t> loads;
  std::vector<std::pair<uint64_t, uint64_t>> key;
  for (uint32_t i = 0; i < n; ++i) {
    if (cmds[i].role != LaneRole::Load) continue;
    const uint32_t r = first_reader[i];
    if (r != kNone && cmds[r].role == LaneRole::Compute) {
      group[i] = group[r];
      continue;
    }
    key.clear();
    for (const LaneRegion& x : regions.subspan(cmds[i].first, cmds[i].count))
      key.emplace_back(x.begin, x.end);
    group[i] = loads.try_emplace(key, group[i]).first->second;
  }
  for (uint32_t i = 0; i < n; ++i)
    if (cmds[i].role == LaneRole::Store && writer_of[i] != kNone) group[i] = group[writer_of[i]];
  // In the commands' order, a group goes to the lane where its first command would start
  // first, by the costs and the conflicts that renaming leaves.
  const LaneConflicts g = lane_conflicts(cmds, regions, true);
  constexpr uint8_t kUnset = 255;
  std::vector<uint8_t> lane(n, 0), group_lane(n, kUnset);
  std::vector<uint64_t> end(n, 0);
  uint64_t free_at[2] = {0, 0};
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t start[2] = {free_at[0], free_at[1]};
    for (uint32_t k = g.first[i]; k < g.first[i + 1]; ++k) {
      const uint32_t j = g.preds[k];
      for (int l = 0; l < 2; ++l)
        start[l] = std::max(start[l], end[j] + (lane[j] != l ? kHandoff : 0));
    }
    uint8_t& gl = group_lane[group[i]];
    if (gl == kUnset) gl = start[1] < start[0] ? 1 : 0;
    lane[i] = gl;
    end[i] = free_at[gl] = start[gl] + cmds[i].cost;
  }
  return lane;
}

LaneSchedule schedule_fixed_lanes(std::span<const LaneCommand> cmds,
                                  std::span<const LaneRegion> regions,
                                  std::span<const uint8_t> lane_of) {
  const auto n = static_cast<uint32_t>(cmds.size());
  const LaneConflicts g = lane_conflicts(cmds, regions);
  LaneSchedule out;
  std::vector<uint32_t> pos(n, 0);
  std::vector<uint64_t> end(n, 0);
  uint64_t free_at[2] = {0, 0};
  for (uint32_t i = 0; i < n; ++i) {  // each conflict is with an earlier command
    const int lane = lane_of[i];
    uint64_t start = free_at[lane];
    uint32_t wait = 0;
    for (uint32_t k = g.first[i]; k < g.first[i + 1]; ++k) {
      const uint32_t j = g.preds[k];
      if (lane_of[j] == lane) {
        start = std::max(start, end[j]);
      } else {
        start = std::max(start, end[j] + kHandoff);
        wait = std::max(wait, pos[j] + 1);
      }
    }
    pos[i] = static_cast<uint32_t>(out.order[lane].size());
    end[i] = free_at[lane] = start + cmds[i].cost;
    out.order[lane].push_back(i);
    out.wait[lane].push_back(wait);
  }
  out.makespan = std::max(free_at[0], free_at[1]);
  return out;
}

}  // namespace npu::emu

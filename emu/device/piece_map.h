// PieceMap: disjoint byte ranges of one address space (SRAM offsets or host addresses), each
// with a value, keyed by first byte: what the lanes' planners know of each range (who wrote
// and read it, lane_schedule.cpp; which SRAM bank holds it, sram_banks.cpp). Ranges no one
// assigned are gaps, which cover() fills with a default value.
//
// Threading: none (a planner's local state). Lifetime: a value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <utility>

namespace npu::emu {

template <class V>
class PieceMap {
 public:
  /// Calls f(first byte, end, value) for pieces that exactly tile [b, e), made so first
  /// (splitting the pieces across b and e, filling gaps with V{}).
  template <class F>
  void cover(uint64_t b, uint64_t e, F&& f) {
    split(b);
    split(e);
    uint64_t at = b;
    auto it = pieces_.lower_bound(b);
    while (at < e) {
      if (it == pieces_.end() || it->first > at) {  // a gap up to the next piece
        const uint64_t gap_end = it == pieces_.end() ? e : std::min(e, it->first);
        it = pieces_.emplace_hint(it, at, Piece{gap_end, V{}});
      }
      f(it->first, it->second.end, it->second.value);
      at = it->second.end;
      ++it;
    }
  }

  /// Calls f(first byte, end, value) for the pieces that meet [b, e) as they are (gaps left
  /// out), in address order.
  template <class F>
  void visit(uint64_t b, uint64_t e, F&& f) const {
    auto it = pieces_.upper_bound(b);
    if (it != pieces_.begin() && std::prev(it)->second.end > b) --it;
    for (; it != pieces_.end() && it->first < e; ++it)
      f(it->first, it->second.end, it->second.value);
  }

  /// Makes [b, e) one piece holding v.
  void assign(uint64_t b, uint64_t e, V v) {
    split(b);
    split(e);
    pieces_.erase(pieces_.lower_bound(b), pieces_.lower_bound(e));
    pieces_.emplace(b, Piece{e, std::move(v)});
  }

  /// f(first byte, end, value) for every piece, in address order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [b, p] : pieces_) f(b, p.end, p.value);
  }

 private:
  struct Piece {
    uint64_t end;
    V value;
  };

  /// Cuts the piece that holds x inside it into two at x.
  void split(uint64_t x) {
    auto it = pieces_.upper_bound(x);
    if (it == pieces_.begin()) return;
    --it;
    if (it->first == x || it->second.end <= x) return;
    Piece right = it->second;
    it->second.end = x;
    pieces_.emplace_hint(std::next(it), x, std::move(right));
  }

  std::map<uint64_t, Piece> pieces_;
};

}  // namespace npu::emu

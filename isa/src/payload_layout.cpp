// The layout checks of the payload field table (npu/isa/fields.def) against the payload structs
// of uapi/npu_isa.h, which stay written out there as the C ABI contract. For every payload an
// opcode row names, at compile time:
//   - each row's member exists, and its size and element type (width, signedness, float) are
//     those of the row's TYPE and COUNT;
//   - the rows, reserved members included, tile the command: the first starts right after
//     struct npu_cmd_header, each next one where the previous ended, the last ends at
//     NPU_CMD_SIZE. A member added to the struct but not to the table, or a row out of struct
//     order, breaks the tiling.
// This file holds no code; a failed check stops the build with the payload and member named.
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "npu/isa/builder.h"
#include "npu/isa/fields.def"
#include "npu_isa.h"

namespace npu::isa {
namespace {

/// A member's declared type, arrays included (unevaluated).
#define NPU_MEMBER_TYPE(P, MEMBER) decltype(std::declval<const npu_cmd&>().P.MEMBER)

/// Whether a member's element type is the table's TYPE: same width, signedness and kind.
template <typename Member, typename Table>
constexpr bool same_element() {
  using E = std::remove_cv_t<std::remove_all_extents_t<Member>>;
  return sizeof(E) == sizeof(Table) && std::is_signed_v<E> == std::is_signed_v<Table> &&
         std::is_floating_point_v<E> == std::is_floating_point_v<Table>;
}

struct Span {
  size_t offset, size;
};

/// The index of the first row that does not start where the previous ended (or, past the
/// last row, whether the last one ends at the command's end): rows.size() when they tile.
template <size_t N>
constexpr size_t first_gap(const std::array<Span, N>& rows) {
  size_t at = sizeof(npu_cmd_header);
  for (size_t i = 0; i < N; ++i) {
    if (rows[i].offset != at) return i;
    at += rows[i].size;
  }
  return at == NPU_CMD_SIZE ? N : N + 1;
}

#define NPU_CHECK_FIELD(P, MEMBER, T, N, ...)                                                      \
  static_assert(same_element<NPU_MEMBER_TYPE(P, MEMBER), fields::T>(),                             \
                "fields.def: " #P "." #MEMBER " is not of element type " #T " in uapi/npu_isa.h"); \
  static_assert(sizeof(NPU_MEMBER_TYPE(P, MEMBER)) == sizeof(fields::T) * (N),                     \
                "fields.def: " #P "." #MEMBER " is not " #N " x " #T " in uapi/npu_isa.h");
#define NPU_CHECK_RESERVED(P, MEMBER)
#define NPU_SPAN_FIELD(P, MEMBER, ...) \
  Span{offsetof(npu_cmd, P.MEMBER), sizeof(NPU_MEMBER_TYPE(P, MEMBER))},
#define NPU_SPAN_RESERVED(P, MEMBER) NPU_SPAN_FIELD(P, MEMBER)
#define NPU_CHECK_PAYLOAD(P)                                                          \
  NPU_FIELDS_##P(NPU_CHECK_FIELD, NPU_CHECK_RESERVED) static_assert(                  \
      [] {                                                                            \
        constexpr auto rows =                                                         \
            std::to_array<Span>({NPU_FIELDS_##P(NPU_SPAN_FIELD, NPU_SPAN_RESERVED)}); \
        return first_gap(rows) == rows.size();                                        \
      }(),                                                                            \
      "fields.def: the rows of " #P                                                   \
      " (reserved members included) do not tile struct "                              \
      "npu_cmd_" #P " in uapi/npu_isa.h: a member is missing, extra or out of struct order");

#define NPU_CONTROL(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, ...) NPU_CHECK_PAYLOAD(PAYLOAD)
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, ...) NPU_CHECK_PAYLOAD(PAYLOAD)
#include "npu/isa/opcodes.def"

}  // namespace
}  // namespace npu::isa

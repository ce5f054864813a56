// The .npub container: header, section table, payloads and metadata (docs/package.md §2).
// The reader checks the layout in a fixed order (magic, version, sizes, checksum, reserved
// fields, table, every range, overlaps) before it decodes the JSON, then hands the decoded
// Package to validate_package().
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "npu/format/crc32.h"
#include "npu/format/file.h"
#include "npu/format/package.h"

namespace npu::format {
namespace {

uint64_t get_le(std::span<const std::byte> b, size_t off, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(static_cast<uint8_t>(b[off + i])) << (8 * i);
  return v;
}
void put_le(std::span<std::byte> b, size_t off, size_t n, uint64_t v) {
  for (size_t i = 0; i < n; ++i) b[off + i] = std::byte(uint8_t(v >> (8 * i)));
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

uint32_t checksum_of(std::span<const std::byte> bytes) {
  static constexpr std::byte kZero[4] = {};
  uint32_t crc = crc32(bytes.subspan(0, header::kChecksum));
  crc = crc32(kZero, crc);
  return crc32(bytes.subspan(header::kChecksum + 4), crc);
}

// A section name from its NUL-padded field, printable for messages.
std::string entry_name(std::span<const std::byte> field) {
  std::string s;
  for (std::byte b : field) {
    if (b == std::byte{0}) break;
    s += static_cast<char>(b);
  }
  return s;
}

std::string escaped(std::string_view s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '"' && c != '\\') {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    }
  }
  return out;
}

struct Range {
  uint64_t begin, end;
  std::string what;
};

}  // namespace

const char* section_kind_name(SectionKind kind) {
  switch (kind) {
    case SectionKind::kCommandBuffer:
      return "command_buffer";
    case SectionKind::kConstants:
      return "constants";
    case SectionKind::kHostData:
      return "host_data";
    case SectionKind::kExtra:
      return "extra";
  }
  return "unknown";
}

void seal_package(std::span<std::byte> bytes) {
  if (bytes.size() < header::kSize) return;
  put_le(bytes, header::kChecksum, 4, checksum_of(bytes));
}

namespace {

/// A package file as pieces in file order: `head` (header, section table, padding up to the
/// first section; checksum already stored) followed by the spans of `pieces` (section data,
/// zero padding, metadata), which point into the caller's sections and text.
struct PackagePieces {
  std::vector<std::byte> head;
  std::vector<std::span<const std::byte>> rest;
  uint64_t size = 0;
};

PackagePieces package_pieces(std::string_view metadata_json, std::span<const Section> sections,
                             uint16_t version_minor) {
  static constexpr std::byte kPad[kSectionAlign] = {};
  const uint64_t table = header::kSize;
  uint64_t cursor = align_up(table + sections.size() * section_entry::kEntrySize, kSectionAlign);
  PackagePieces p;
  p.head.resize(cursor);
  std::vector<uint64_t> offsets;
  for (const Section& s : sections) {
    offsets.push_back(cursor);
    if (!s.data.empty()) p.rest.emplace_back(s.data);
    const uint64_t next = align_up(cursor + s.data.size(), kSectionAlign);
    if (next > cursor + s.data.size())
      p.rest.emplace_back(kPad, static_cast<size_t>(next - cursor - s.data.size()));
    cursor = next;
  }
  const uint64_t meta = cursor;
  if (!metadata_json.empty())
    p.rest.emplace_back(reinterpret_cast<const std::byte*>(metadata_json.data()),
                        metadata_json.size());
  p.size = meta + metadata_json.size();
  std::vector<std::byte>& out = p.head;
  std::memcpy(out.data() + header::kMagic, kPackageMagic, 4);
  put_le(out, header::kVersionMajor, 2, kPackageVersionMajor);
  put_le(out, header::kVersionMinor, 2, version_minor);
  put_le(out, header::kHeaderSize, 4, header::kSize);
  put_le(out, header::kFileSize, 8, p.size);
  put_le(out, header::kMetadataOffset, 8, meta);
  put_le(out, header::kMetadataSize, 8, metadata_json.size());
  put_le(out, header::kSectionTableOffset, 8, table);
  put_le(out, header::kSectionCount, 4, sections.size());
  for (size_t i = 0; i < sections.size(); ++i) {
    const size_t e = table + i * section_entry::kEntrySize;
    put_le(out, e + section_entry::kKind, 4, static_cast<uint32_t>(sections[i].kind));
    put_le(out, e + section_entry::kOffset, 8, offsets[i]);
    put_le(out, e + section_entry::kSize, 8, sections[i].data.size());
    std::memcpy(out.data() + e + section_entry::kName, sections[i].name.data(),
                std::min(sections[i].name.size(), section_entry::kNameSize));
  }
  // The checksum covers the whole file with its own field read as zero (checksum_of()); the
  // field is still zero here.
  uint32_t crc = crc32(out);
  for (const auto piece : p.rest) crc = crc32(piece, crc);
  put_le(out, header::kChecksum, 4, crc);
  return p;
}

}  // namespace

std::vector<std::byte> assemble_package(std::string_view metadata_json,
                                        std::span<const Section> sections, uint16_t version_minor) {
  const PackagePieces p = package_pieces(metadata_json, sections, version_minor);
  std::vector<std::byte> out;
  out.reserve(p.size);
  out.insert(out.end(), p.head.begin(), p.head.end());
  for (const auto piece : p.rest) out.insert(out.end(), piece.begin(), piece.end());
  return out;
}

Expected<std::vector<std::byte>> serialize_package(const Package& p) {
  NPU_TRY(validate_package(p, "package"));
  return assemble_package(metadata_to_json(p.metadata), p.sections);
}

Expected<void> write_package(const std::string& path, const Package& p) {
  NPU_TRY(validate_package(p, path));
  // Written piece by piece from the sections: no second copy of the constants.
  const std::string metadata = metadata_to_json(p.metadata);
  const PackagePieces pieces = package_pieces(metadata, p.sections, kPackageVersionMinor);
  std::vector<std::span<const std::byte>> all{pieces.head};
  all.insert(all.end(), pieces.rest.begin(), pieces.rest.end());
  return write_file(path, all);
}

Expected<Package> read_package(const std::string& path, const isa::DeviceConfig* device) {
  // Mapped, not read: the sections that are views keep the mapping alive.
  auto file = MappedFile::open(path);
  if (!file) return file.error();
  auto mapping = std::make_shared<const MappedFile>(std::move(*file));
  const auto bytes = mapping->bytes();
  return parse_package(bytes, std::move(mapping), path, device);
}

Expected<Package> parse_package(std::span<const std::byte> bytes, std::string_view name,
                                const isa::DeviceConfig* device) {
  return parse_package(bytes, nullptr, name, device);
}

// With an `owner`, sections other than command buffers are views of `bytes` sharing it;
// without, every section is a copy.
Expected<Package> parse_package(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                                std::string_view name, const isa::DeviceConfig* device) {
  const std::string n(name);
  auto fail = [&](const std::string& what) { return make_error(EINVAL, n + ": " + what); };
  const uint64_t file_size = bytes.size();

  // Magic, with a hint for the files people confuse with packages.
  if (file_size < 4 || std::memcmp(bytes.data(), kPackageMagic, 4) != 0) {
    if (file_size >= 4 && std::memcmp(bytes.data(), "NPUC", 4) == 0) {
      return fail("not a model package: this is a raw command buffer (magic \"NPUC\")");
    }
    if (file_size >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0) {
      return fail("not a model package: this is a .npy file");
    }
    return fail("not a model package (bad magic, expected \"NPUB\")");
  }
  if (file_size < header::kSize) {
    return fail("truncated header: " + std::to_string(file_size) + " bytes, need " +
                std::to_string(header::kSize));
  }
  const auto major = static_cast<uint16_t>(get_le(bytes, header::kVersionMajor, 2));
  const auto minor = static_cast<uint16_t>(get_le(bytes, header::kVersionMinor, 2));
  if (major != kPackageVersionMajor) {
    return fail("unsupported package format version " + std::to_string(major) + "." +
                std::to_string(minor) + " (this reader supports " +
                std::to_string(kPackageVersionMajor) + ".x)");
  }
  const bool newer = minor > kPackageVersionMinor;
  const uint64_t declared_size = get_le(bytes, header::kFileSize, 8);
  if (declared_size != file_size) {
    return fail("header: file size " + std::to_string(declared_size) + " but the file has " +
                std::to_string(file_size) + " bytes" +
                (declared_size > file_size ? " (truncated)" : " (trailing bytes)"));
  }
  const uint32_t stored_crc = static_cast<uint32_t>(get_le(bytes, header::kChecksum, 4));
  const uint32_t crc = checksum_of(bytes);
  if (stored_crc != crc) {
    return fail("checksum mismatch: header says " + hex(stored_crc) + ", contents give " +
                hex(crc) + " (file corrupted)");
  }
  const uint64_t header_size = get_le(bytes, header::kHeaderSize, 4);
  if (newer ? (header_size < header::kSize || header_size % 8 != 0 || header_size > file_size)
            : header_size != header::kSize) {
    return fail("header: header size " + std::to_string(header_size) + " (expected " +
                std::to_string(header::kSize) + ")");
  }
  const uint64_t flags = get_le(bytes, header::kFlags, 4);
  if (flags != 0) return fail("header: flags " + hex(flags) + " has unknown bits (must be 0)");
  const uint64_t reserved = get_le(bytes, header::kReserved, 8);
  if (reserved != 0 && !newer) return fail("header: reserved field " + hex(reserved) + " is not 0");

  std::vector<Range> ranges{{0, header_size, "the header"}};

  // Section table.
  const uint64_t table = get_le(bytes, header::kSectionTableOffset, 8);
  const uint64_t count = get_le(bytes, header::kSectionCount, 4);
  if (count > kMaxSections) {
    return fail("header: section count " + std::to_string(count) + " above " +
                std::to_string(kMaxSections));
  }
  const uint64_t table_bytes = count * section_entry::kEntrySize;
  if (table % 8 != 0)
    return fail("section table: offset " + std::to_string(table) + " is not 8-aligned");
  if (table > file_size || table_bytes > file_size - table) {
    return fail("section table: offset " + std::to_string(table) + " + size " +
                std::to_string(table_bytes) + " beyond file size " + std::to_string(file_size));
  }
  if (table_bytes) ranges.push_back({table, table + table_bytes, "the section table"});

  Package p;
  for (uint64_t i = 0; i < count; ++i) {
    const size_t e = table + i * section_entry::kEntrySize;
    const auto field = bytes.subspan(e + section_entry::kName, section_entry::kNameSize);
    const std::string sname = entry_name(field);
    const std::string where = "section " + std::to_string(i) + " (" + escaped(sname) + ")";
    const auto kind = static_cast<uint32_t>(get_le(bytes, e + section_entry::kKind, 4));
    if (std::string_view(section_kind_name(SectionKind{kind})) == "unknown" && !newer) {
      return fail(where + ": unknown kind " + std::to_string(kind));
    }
    const uint64_t sflags = get_le(bytes, e + section_entry::kFlags, 4);
    if (sflags != 0)
      return fail(where + ": flags " + hex(sflags) + " has unknown bits (must be 0)");
    for (size_t k = sname.size(); k < field.size(); ++k) {
      if (field[k] != std::byte{0}) return fail(where + ": name is not NUL-padded");
    }
    const uint64_t off = get_le(bytes, e + section_entry::kOffset, 8);
    const uint64_t size = get_le(bytes, e + section_entry::kSize, 8);
    if (off % kSectionAlign != 0) {
      return fail(where + ": offset " + std::to_string(off) + " is not " +
                  std::to_string(kSectionAlign) + "-aligned");
    }
    if (off > file_size || size > file_size - off) {
      return fail(where + ": offset " + std::to_string(off) + " + size " + std::to_string(size) +
                  " beyond file size " + std::to_string(file_size));
    }
    if (size) ranges.push_back({off, off + size, where});
    Section s;
    // A kind from a newer minor version is opaque to this reader: it reads as kExtra (only
    // keys this reader ignores can refer to it).
    s.kind = std::string_view(section_kind_name(SectionKind{kind})) == "unknown"
                 ? SectionKind::kExtra
                 : SectionKind{kind};
    s.name = sname;
    const auto section_bytes = bytes.subspan(off, size);
    if (owner && s.kind != SectionKind::kCommandBuffer) {
      s.data = SectionBytes(section_bytes, owner);
    } else {
      s.data = std::vector<std::byte>(section_bytes.begin(), section_bytes.end());
    }
    p.sections.push_back(std::move(s));
  }

  // Metadata.
  const uint64_t meta = get_le(bytes, header::kMetadataOffset, 8);
  const uint64_t meta_size = get_le(bytes, header::kMetadataSize, 8);
  if (meta % 8 != 0) return fail("metadata: offset " + std::to_string(meta) + " is not 8-aligned");
  if (meta_size < 2) return fail("metadata: size " + std::to_string(meta_size) + " is too small");
  if (meta > file_size || meta_size > file_size - meta) {
    return fail("metadata: offset " + std::to_string(meta) + " + size " +
                std::to_string(meta_size) + " beyond file size " + std::to_string(file_size));
  }
  ranges.push_back({meta, meta + meta_size, "the metadata"});

  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i) {
    if (ranges[i].begin < ranges[i - 1].end) {
      return fail(ranges[i].what + " [" + std::to_string(ranges[i].begin) + ", " +
                  std::to_string(ranges[i].end) + ") overlaps " + ranges[i - 1].what + " [" +
                  std::to_string(ranges[i - 1].begin) + ", " + std::to_string(ranges[i - 1].end) +
                  ")");
    }
  }

  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + meta), meta_size);
  auto m = metadata_from_json(text, n + ": metadata", newer);
  if (!m) return m.error();
  p.metadata = std::move(*m);
  NPU_TRY(validate_package(p, name, device));
  return p;
}

}  // namespace npu::format

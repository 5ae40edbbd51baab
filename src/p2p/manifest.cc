#include "p2p/manifest.h"

#include <fmt/format.h>

#include <set>
#include <span>

#include "common/wire_fields.h"

namespace mooncake::p2p {

uint64_t CountPieces(const std::vector<ManifestEntry>& entries, uint64_t piece_size) {
  if (piece_size == 0) return uint64_t{kMaxPieces} + 1;
  uint64_t n = 0;
  for (const auto& e : entries) {
    n += e.size / piece_size + (e.size % piece_size != 0 ? 1 : 0);
    if (n > kMaxPieces) return uint64_t{kMaxPieces} + 1;
  }
  return n;
}

std::string UnsafePathReason(const std::string& path) {
  if (path.empty()) return "empty path";
  if (path.size() > kMaxPathBytes) return "path longer than 4096 bytes";
  if (path.front() == '/') return "absolute path";
  if (path.find('\0') != std::string::npos) return "NUL byte in path";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string_view part(path.data() + start, end - start);
    if (part.empty()) return "empty path component";
    if (part == "." || part == "..") return "'.' or '..' component";
    start = end + 1;
  }
  return "";
}

uint64_t Manifest::total_bytes() const {
  uint64_t total = 0;
  for (const auto& e : entries) total += e.size;
  return total;
}

Status Manifest::Validate() const {
  if (name.empty() || name.size() > kMaxNameBytes) {
    return InvalidArgument(fmt::format("object name '{}': 1 to {} bytes", name, kMaxNameBytes));
  }
  if (piece_size < kMinPieceSize || piece_size > kMaxPieceSize) {
    return InvalidArgument(
        fmt::format("object '{}': piece size {} outside 4 KiB..1 GiB", name, piece_size));
  }
  if (entries.size() > kMaxEntries) {
    return InvalidArgument(
        fmt::format("object '{}': {} entries (at most {})", name, entries.size(), kMaxEntries));
  }
  std::set<std::string_view> seen;
  uint64_t total = 0;
  for (const auto& e : entries) {
    if (std::string why = UnsafePathReason(e.path); !why.empty()) {
      return InvalidArgument(fmt::format("object '{}': entry '{}': {}", name, e.path, why));
    }
    if (!seen.insert(e.path).second) {
      return InvalidArgument(fmt::format("object '{}': entry '{}' appears twice", name, e.path));
    }
    if (e.size > (uint64_t{1} << 50) || total + e.size < total) {
      return InvalidArgument(fmt::format("object '{}': entry '{}' is too large", name, e.path));
    }
    total += e.size;
    if (e.mode > 07777) {
      return InvalidArgument(
          fmt::format("object '{}': entry '{}' has mode {:o}", name, e.path, e.mode));
    }
  }
  const uint64_t pieces = CountPieces(entries, piece_size);
  if (pieces > kMaxPieces) {
    return InvalidArgument(fmt::format("object '{}': more than {} pieces", name, kMaxPieces));
  }
  if (checksums.size() != pieces) {
    return InvalidArgument(
        fmt::format("object '{}': {} checksums for {} pieces", name, checksums.size(), pieces));
  }
  return Status::Ok();
}

PieceLayout::PieceLayout(const std::vector<ManifestEntry>& entries, uint64_t piece_size) {
  entry_offsets_.reserve(entries.size());
  for (uint32_t e = 0; e < entries.size(); ++e) {
    entry_offsets_.push_back(total_bytes_);
    for (uint64_t off = 0; off < entries[e].size; off += piece_size) {
      pieces_.push_back({e, off, std::min(piece_size, entries[e].size - off)});
    }
    total_bytes_ += entries[e].size;
  }
}

std::vector<std::byte> EncodeManifest(const Manifest& manifest) { return WireEncode(manifest); }

Result<Manifest> DecodeManifest(std::span<const std::byte> bytes) {
  return WireDecode<Manifest>(bytes, "P2P manifest");
}

}  // namespace mooncake::p2p

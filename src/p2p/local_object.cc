#include "p2p/local_object.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "common/checksum.h"

namespace mooncake::p2p {
namespace fs = std::filesystem;

namespace {

Status Errno(const std::string& what) {
  return IoError(fmt::format("{}: {}", what, std::strerror(errno)));
}

// Closes a file descriptor when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string ObjectNameOf(const std::string& path) {
  fs::path p = fs::absolute(fs::path(path)).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

Result<std::vector<SourceFile>> ScanSource(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return NotFound(fmt::format("{}: no such file or folder", path));
  const std::string base = ObjectNameOf(path);
  if (std::string why = UnsafePathReason(base); !why.empty() || base == "/") {
    return InvalidArgument(fmt::format("{}: cannot name an object after it", path));
  }
  std::vector<SourceFile> out;
  auto add = [&](const fs::path& file, const std::string& name) -> Status {
    std::error_code e;
    const uint64_t size = fs::file_size(file, e);
    if (e) return IoError(fmt::format("{}: {}", file.string(), e.message()));
    const auto perms = static_cast<uint32_t>(fs::status(file, e).permissions()) & 0777;
    out.push_back({file.string(), ManifestEntry{name, size, perms}});
    return Status::Ok();
  };
  if (fs::is_regular_file(st)) {
    MC_RETURN_IF_ERROR(add(path, base));
    return out;
  }
  if (!fs::is_directory(st)) {
    return InvalidArgument(fmt::format("{}: neither a regular file nor a folder", path));
  }
  fs::recursive_directory_iterator it(path, ec), end;
  if (ec) return IoError(fmt::format("{}: {}", path, ec.message()));
  for (; it != end; it.increment(ec)) {
    if (ec) return IoError(fmt::format("{}: {}", path, ec.message()));
    std::error_code e;
    if (!it->is_regular_file(e)) continue;  // folders are implied; devices, sockets skipped
    const std::string rel = fs::relative(it->path(), path, e).generic_string();
    if (e) return IoError(fmt::format("{}: {}", it->path().string(), e.message()));
    MC_RETURN_IF_ERROR(add(it->path(), base + "/" + rel));
  }
  if (ec) return IoError(fmt::format("{}: {}", path, ec.message()));
  std::sort(out.begin(), out.end(),
            [](const SourceFile& a, const SourceFile& b) { return a.entry.path < b.entry.path; });
  return out;
}

LocalObject::~LocalObject() {
  for (Mapping& m : mappings_) {
    if (m.region.id != 0 && transport_ != nullptr) (void)transport_->UnregisterMemory(m.region);
    if (m.kind == Mapping::Kind::kMmap) ::munmap(m.addr, m.length);
    if (m.kind == Mapping::Kind::kHeap) std::free(m.addr);
  }
}

void LocalObject::TransportClosed() {
  for (Mapping& m : mappings_) {
    m.region = {};
    if (m.kind == Mapping::Kind::kTransport) m.kind = Mapping::Kind::kReleased;
  }
  transport_ = nullptr;
}

Status LocalObject::Register(Mapping& m) {
  if (transport_ == nullptr || m.kind == Mapping::Kind::kTransport) return Status::Ok();
  auto region = transport_->RegisterMemory(m.addr, m.length, transport::MemoryType::kHost);
  if (!region.ok()) return region.status();
  m.region = *region;
  return Status::Ok();
}

Status LocalObject::MapFile(const std::string& file, uint64_t size, int open_flags, int prot,
                            int flags, size_t entry) {
  Fd fd{::open(file.c_str(), open_flags | O_CLOEXEC, entries_[entry].mode | 0600)};
  if (fd.fd < 0) return Errno(fmt::format("cannot open {}", file));
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) return Errno(fmt::format("cannot stat {}", file));
  if (!S_ISREG(st.st_mode)) return InvalidArgument(fmt::format("{}: not a regular file", file));
  const bool creating = (open_flags & O_CREAT) != 0;
  if (creating) {
    entry_existed_[entry] = static_cast<uint64_t>(st.st_size) == size && size > 0;
    if (static_cast<uint64_t>(st.st_size) != size && ::ftruncate(fd.fd, size) != 0) {
      return Errno(fmt::format("cannot size {} to {} bytes", file, size));
    }
  } else if (static_cast<uint64_t>(st.st_size) != size) {
    return InvalidArgument(fmt::format(
        "{} has {} bytes, expected {} (it changed since it was read)", file, st.st_size, size));
  }
  if (size == 0) return Status::Ok();
  void* addr = ::mmap(nullptr, size, prot, flags, fd.fd, 0);
  if (addr == MAP_FAILED) return Errno(fmt::format("cannot map {}", file));
  mappings_.push_back({addr, size, Mapping::Kind::kMmap, {}});
  entry_data_[entry] = static_cast<std::byte*>(addr);
  return Register(mappings_.back());
}

Status LocalObject::AllocateBuffer(uint64_t total) {
  if (total == 0) return Status::Ok();
  // The transport's memory first: UCX allocates a posix segment that a same-host peer maps, so
  // its reads are one memcpy on its own thread (fused with the check: copy_hash.h). Heap pages
  // registered with the transport are read over UCX's emulated RMA on shared memory, which
  // needs the holder's progress thread: measured 4 ranks x 1 GiB on 2 cores, 15.1 s against
  // 7.3 s (benchmarks/p2p_vs_bcast.sh, machine shared with builds).
  if (transport_ != nullptr) {
    auto region = transport_->AllocateMemory(total, transport::MemoryType::kHost);
    if (region.ok()) {
      mappings_.push_back({region->addr, total, Mapping::Kind::kTransport, *region});
      return Status::Ok();
    }
  }
  const size_t rounded = (total + 4095) / 4096 * 4096;
  void* addr = std::aligned_alloc(4096, rounded);
  if (addr == nullptr) return NoSpace(fmt::format("cannot allocate {} bytes", total));
  mappings_.push_back({addr, total, Mapping::Kind::kHeap, {}});
  return Register(mappings_.back());
}

Result<std::unique_ptr<LocalObject>> LocalObject::OpenSourceFiles(
    const std::vector<SourceFile>& files, transport::Transport* transport, bool writable_private) {
  std::unique_ptr<LocalObject> o(new LocalObject());
  o->transport_ = transport;
  for (const auto& f : files) o->entries_.push_back(f.entry);
  o->entry_data_.assign(files.size(), nullptr);
  o->entry_existed_.assign(files.size(), true);
  for (size_t e = 0; e < files.size(); ++e) {
    const int prot = writable_private ? PROT_READ | PROT_WRITE : PROT_READ;
    const int flags = writable_private ? MAP_PRIVATE : MAP_SHARED;
    const size_t mapped_before = o->mappings_.size();
    Status s = o->MapFile(files[e].file, files[e].entry.size, O_RDONLY, prot, flags, e);
    if (!s.ok() && !writable_private && o->mappings_.size() > mapped_before) {
      // Mapped, but the backend refused to register it: one that registers for local writes
      // too (ibverbs) refuses read-only pages. Map copy-on-write instead (pages it pins get
      // copied; the file is never written).
      Mapping& last = o->mappings_.back();
      ::munmap(last.addr, last.length);
      o->mappings_.pop_back();
      s = o->MapFile(files[e].file, files[e].entry.size, O_RDONLY, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE, e);
    }
    if (!s.ok()) return s;
  }
  return o;
}

Result<std::unique_ptr<LocalObject>> LocalObject::LoadSourceMemory(
    const std::vector<SourceFile>& files, uint64_t piece_size, transport::Transport* transport,
    std::vector<uint64_t>* checksums) {
  std::unique_ptr<LocalObject> o(new LocalObject());
  o->transport_ = transport;
  uint64_t total = 0;
  for (const auto& f : files) {
    o->entries_.push_back(f.entry);
    total += f.entry.size;
  }
  o->entry_data_.assign(files.size(), nullptr);
  o->entry_existed_.assign(files.size(), true);
  MC_RETURN_IF_ERROR(o->AllocateBuffer(total));
  auto* base = total > 0 ? static_cast<std::byte*>(o->mappings_[0].addr) : nullptr;
  checksums->clear();
  uint64_t at = 0;
  for (size_t e = 0; e < files.size(); ++e) {
    const uint64_t size = files[e].entry.size;
    if (size == 0) continue;
    o->entry_data_[e] = base + at;
    Fd fd{::open(files[e].file.c_str(), O_RDONLY | O_CLOEXEC)};
    if (fd.fd < 0) return Errno(fmt::format("cannot open {}", files[e].file));
    for (uint64_t off = 0; off < size; off += piece_size) {
      const uint64_t len = std::min(piece_size, size - off);
      for (uint64_t done = 0; done < len;) {
        const ssize_t n = ::pread(fd.fd, base + at + off + done, len - done, off + done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Errno(fmt::format("cannot read {}", files[e].file));
        if (n == 0) return IoError(fmt::format("{} is shorter than {} bytes", files[e].file, size));
        done += static_cast<uint64_t>(n);
      }
      checksums->push_back(Checksum64(base + at + off, len));
    }
    at += size;
  }
  return o;
}

std::unique_ptr<LocalObject> LocalObject::ForManifest(const Manifest& manifest,
                                                      transport::Transport* transport,
                                                      bool existed) {
  std::unique_ptr<LocalObject> o(new LocalObject());
  o->transport_ = transport;
  o->entries_ = manifest.entries;
  o->entry_data_.assign(o->entries_.size(), nullptr);
  o->entry_existed_.assign(o->entries_.size(), existed);
  return o;
}

Result<std::unique_ptr<LocalObject>> LocalObject::CreateFiles(const Manifest& manifest,
                                                              const std::string& dir,
                                                              transport::Transport* transport) {
  std::unique_ptr<LocalObject> o = ForManifest(manifest, transport, /*existed=*/false);
  for (size_t e = 0; e < o->entries_.size(); ++e) {
    const fs::path file = fs::path(dir) / o->entries_[e].path;
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec)
      return IoError(
          fmt::format("cannot create {}: {}", file.parent_path().string(), ec.message()));
    MC_RETURN_IF_ERROR(o->MapFile(file.string(), o->entries_[e].size, O_RDWR | O_CREAT,
                                  PROT_READ | PROT_WRITE, MAP_SHARED, e));
  }
  return o;
}

Result<std::unique_ptr<LocalObject>> LocalObject::OpenExistingFiles(const Manifest& manifest,
                                                                    const std::string& dir) {
  std::unique_ptr<LocalObject> o = ForManifest(manifest, nullptr, /*existed=*/true);
  for (size_t e = 0; e < o->entries_.size(); ++e) {
    const fs::path file = fs::path(dir) / o->entries_[e].path;
    MC_RETURN_IF_ERROR(
        o->MapFile(file.string(), o->entries_[e].size, O_RDONLY, PROT_READ, MAP_SHARED, e));
  }
  return o;
}

Result<std::unique_ptr<LocalObject>> LocalObject::CreateMemory(const Manifest& manifest,
                                                               transport::Transport* transport) {
  std::unique_ptr<LocalObject> o = ForManifest(manifest, transport, /*existed=*/false);
  const uint64_t total = manifest.total_bytes();
  MC_RETURN_IF_ERROR(o->AllocateBuffer(total));
  const PieceLayout layout(manifest.entries, manifest.piece_size);
  for (size_t e = 0; e < o->entries_.size(); ++e) {
    if (o->entries_[e].size == 0) continue;
    o->entry_data_[e] = static_cast<std::byte*>(o->mappings_[0].addr) + layout.entry_offset(e);
  }
  return o;
}

std::vector<uint64_t> LocalObject::EntryAddresses() const {
  std::vector<uint64_t> out;
  out.reserve(entry_data_.size());
  for (std::byte* p : entry_data_) out.push_back(reinterpret_cast<uint64_t>(p));
  return out;
}

Result<std::vector<std::vector<std::byte>>> LocalObject::ExportDescriptors() const {
  std::vector<std::vector<std::byte>> out;
  if (transport_ == nullptr) return out;
  for (const Mapping& m : mappings_) {
    if (m.region.id == 0) continue;
    auto d = transport_->Export(m.region);
    if (!d.ok()) return d.status();
    out.push_back(d->Encode());
  }
  return out;
}

std::vector<uint64_t> HashPieces(const LocalObject& object, uint64_t piece_size, int threads) {
  const PieceLayout layout(object.entries(), piece_size);
  std::vector<uint64_t> sums(layout.count());
  auto work = [&](size_t first, size_t step) {
    for (size_t i = first; i < layout.count(); i += step) {
      const PieceRef& p = layout[i];
      sums[i] = Checksum64(object.entry_data(p.entry) + p.offset, p.length);
    }
  };
  const size_t n = static_cast<size_t>(std::max(1, threads));
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < n && t < layout.count(); ++t) helpers.emplace_back(work, t, n);
  work(0, n);
  for (auto& h : helpers) h.join();
  return sums;
}

}  // namespace mooncake::p2p

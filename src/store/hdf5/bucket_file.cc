#include "store/hdf5/bucket_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/checksum.h"

namespace mooncake::store::hdf5 {

namespace fs = std::filesystem;

namespace {

struct RawEntry {
  uint32_t kind;
  uint32_t key_length;
  uint64_t version;
  uint64_t offset;
  uint64_t length;
  uint64_t checksum;
  uint64_t key_checksum;
  int64_t written_ns;
};

H5Handle EntryType() {
  H5Handle t(H5Tcreate(H5T_COMPOUND, sizeof(RawEntry)), H5Tclose);
  H5Tinsert(t.get(), "kind", HOFFSET(RawEntry, kind), H5T_NATIVE_UINT32);
  H5Tinsert(t.get(), "key_length", HOFFSET(RawEntry, key_length), H5T_NATIVE_UINT32);
  H5Tinsert(t.get(), "version", HOFFSET(RawEntry, version), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "offset", HOFFSET(RawEntry, offset), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "length", HOFFSET(RawEntry, length), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "checksum", HOFFSET(RawEntry, checksum), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "key_checksum", HOFFSET(RawEntry, key_checksum), H5T_NATIVE_UINT64);
  H5Tinsert(t.get(), "written_ns", HOFFSET(RawEntry, written_ns), H5T_NATIVE_INT64);
  return t;
}

// ENOSPC and its kin by name: "disk full" must be recognisable in a log line.
std::string ErrnoName(int n) {
  switch (n) {
    case ENOSPC:
      return "ENOSPC";
    case EDQUOT:
      return "EDQUOT";
    case EFBIG:
      return "EFBIG";
    case EIO:
      return "EIO";
    case EROFS:
      return "EROFS";
    case EACCES:
      return "EACCES";
    case ENOENT:
      return "ENOENT";
    default:
      return "errno " + std::to_string(n);
  }
}

// The errno under a failed HDF5 call: HDF5's file driver records it on the calling thread's
// error stack ("..., errno = 28, error message = 'No space left on device', ..."). The next HDF5
// API call clears that stack, so a helper that closes handles after its failing call notes the
// errno first (NoteSystemError) for Err to find. 0: none.
thread_local int noted_errno = 0;

int StackErrno() {
  int found = 0;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* out) -> herr_t {
        const char* at = e->desc != nullptr ? std::strstr(e->desc, "errno = ") : nullptr;
        int* n = static_cast<int*>(out);
        if (at != nullptr && *n == 0) *n = std::atoi(at + 8);
        return 0;
      },
      &found);
  return found;
}

// Right after a failed HDF5 call whose caller cleared errno before it.
void NoteSystemError() {
  const int from_errno = errno;
  noted_errno = StackErrno();
  if (noted_errno == 0) noted_errno = from_errno;
}

// ": ENOSPC (No space left on device)", or "" when the failure had no system error.
std::string SystemError() {
  int n = StackErrno();
  if (n == 0) n = noted_errno;
  noted_errno = 0;
  H5Eclear2(H5E_DEFAULT);
  if (n <= 0) return "";
  return ": " + ErrnoName(n) + " (" + std::strerror(n) + ")";
}

Status Err(const std::string& what, const std::string& path) {
  return IoError("hdf5: " + what + " (" + path + ")" + SystemError());
}

bool WriteScalar(hid_t file, const char* name, hid_t type, const void* value) {
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle attr(H5Acreate2(file, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  return attr.valid() && H5Awrite(attr.get(), type, value) >= 0;
}
bool WriteString(hid_t file, const char* name, const std::string& value) {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), value.empty() ? 1 : value.size());
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  std::string padded = value.empty() ? std::string(1, '\0') : value;
  return WriteScalar(file, name, type.get(), padded.data());
}
bool ReadScalar(hid_t file, const char* name, hid_t type, void* out) {
  H5Handle attr(H5Aopen(file, name, H5P_DEFAULT), H5Aclose);
  return attr.valid() && H5Aread(attr.get(), type, out) >= 0;
}
bool ReadString(hid_t file, const char* name, std::string* out) {
  H5Handle attr(H5Aopen(file, name, H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) return false;
  H5Handle ftype(H5Aget_type(attr.get()), H5Tclose);
  size_t n = H5Tget_size(ftype.get());
  if (n == 0 || n > (1 << 16)) return false;
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), n);
  H5Tset_strpad(type.get(), H5T_STR_NULLPAD);
  std::string buf(n, '\0');
  if (H5Aread(attr.get(), type.get(), buf.data()) < 0) return false;
  buf.resize(strnlen(buf.data(), n));
  *out = std::move(buf);
  return true;
}

H5Handle Contiguous(hid_t file, const char* name, hid_t type, uint64_t n, H5D_alloc_time_t when) {
  hsize_t dims = n;
  H5Handle space(H5Screate_simple(1, &dims, nullptr), H5Sclose);
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS);
  H5Pset_alloc_time(dcpl.get(), when);
  H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER);  // sparse: unwritten bytes cost nothing
  return H5Handle(H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                  H5Dclose);
}

// Writes `count` elements of `mem_type` at element `at` of a 1-D dataset.
bool WriteAt(hid_t dset, hid_t mem_type, uint64_t at, uint64_t count, const void* buf) {
  hsize_t start = at, n = count;
  H5Handle fspace(H5Dget_space(dset), H5Sclose);
  H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr);
  H5Handle mspace(H5Screate_simple(1, &n, nullptr), H5Sclose);
  errno = 0;
  if (H5Dwrite(dset, mem_type, mspace.get(), fspace.get(), H5P_DEFAULT, buf) >= 0) return true;
  NoteSystemError();  // before the handles close (which clears HDF5's error stack)
  return false;
}
bool ReadAt(hid_t dset, hid_t mem_type, uint64_t at, uint64_t count, void* buf) {
  hsize_t start = at, n = count;
  H5Handle fspace(H5Dget_space(dset), H5Sclose);
  if (H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, &start, nullptr, &n, nullptr) < 0) {
    return false;
  }
  H5Handle mspace(H5Screate_simple(1, &n, nullptr), H5Sclose);
  return H5Dread(dset, mem_type, mspace.get(), fspace.get(), H5P_DEFAULT, buf) >= 0;
}
uint64_t Extent(hid_t dset) {
  H5Handle space(H5Dget_space(dset), H5Sclose);
  hsize_t dims = 0;
  if (H5Sget_simple_extent_ndims(space.get()) != 1) return 0;
  H5Sget_simple_extent_dims(space.get(), &dims, nullptr);
  return dims;
}

}  // namespace

Result<std::unique_ptr<BucketFile>> BucketFile::Create(const std::string& path,
                                                       const BucketAttributes& a,
                                                       uint64_t data_bytes, uint32_t max_entries,
                                                       SyncHook on_sync) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors come back as Status values
  std::unique_ptr<BucketFile> b(new BucketFile());
  b->path_ = path;
  b->on_sync_ = std::move(on_sync);
  b->data_bytes_ = data_bytes;
  b->max_entries_ = max_entries;
  // /blocks (the one allocation of at least 1 MiB) starts on a 4 KiB page: blocks whose size is
  // a multiple of the page then never share a page with their neighbour, which the disk would
  // otherwise write twice (once with each group), and reads of them stay page-aligned.
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_alignment(fapl.get(), 1 << 20, 4096);
  b->file_ = H5Handle(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()), H5Fclose);
  if (!b->file_.valid()) return Err("cannot create file", path);
  hid_t f = b->file_.get();
  int32_t rank = a.store_rank;
  bool ok = WriteScalar(f, "format_version", H5T_NATIVE_UINT32, &a.format_version) &&
            WriteString(f, "cluster_id", a.cluster_id) &&
            WriteString(f, "model_preset", a.model_preset) &&
            WriteString(f, "kv_layout", a.kv_layout) &&
            WriteScalar(f, "block_tokens", H5T_NATIVE_UINT32, &a.block_tokens) &&
            WriteScalar(f, "store_rank", H5T_NATIVE_INT32, &rank) &&
            WriteString(f, "checksum_algorithm", "XXH3_64");
  if (!ok) return Err("cannot write file attributes", path);
  b->entry_type_ = EntryType();
  // Every piece of metadata must sit before the first block's bytes, so that a torn tail can
  // only hurt the block being written: /index storage is allocated now, /blocks storage (one
  // extent at the end of the file) at the first write, after its name is linked.
  b->index_ = Contiguous(f, "index", b->entry_type_.get(), max_entries, H5D_ALLOC_TIME_EARLY);
  b->blocks_ = Contiguous(f, "blocks", H5T_NATIVE_UINT8, data_bytes, H5D_ALLOC_TIME_LATE);
  if (!b->blocks_.valid() || !b->index_.valid()) return Err("cannot create datasets", path);
  MC_RETURN_IF_ERROR(b->Sync(/*fsync=*/false, /*flush=*/true));
  return b;
}

Result<std::unique_ptr<BucketFile>> BucketFile::Open(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::unique_ptr<BucketFile> b(new BucketFile());
  b->path_ = path;
  b->read_only_ = true;
  b->folder_synced_ = true;  // found in the folder: its name is there already
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  hbool_t skip = 1;  // the property h5clear uses: a torn tail must not hide the intact blocks
  (void)H5Pset(fapl.get(), "skip_eof_check", &skip);
  b->file_ = H5Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), H5Fclose);
  if (!b->file_.valid()) return Err("cannot open file", path);
  b->blocks_ = H5Handle(H5Dopen2(b->file_.get(), "blocks", H5P_DEFAULT), H5Dclose);
  b->index_ = H5Handle(H5Dopen2(b->file_.get(), "index", H5P_DEFAULT), H5Dclose);
  if (!b->blocks_.valid() || !b->index_.valid()) return Err("missing /blocks or /index", path);
  b->entry_type_ = EntryType();
  b->data_bytes_ = Extent(b->blocks_.get());
  b->max_entries_ = static_cast<uint32_t>(Extent(b->index_.get()));
  return b;
}

Result<IndexEntry> BucketFile::Stage(SlotKind kind, const std::string& key, uint64_t version,
                                     std::span<const std::byte> bytes, uint64_t checksum,
                                     bool start_writeback) {
  if (key.empty() || key.size() > UINT32_MAX) return InvalidArgument("bad key length");
  if ((kind == SlotKind::kBlock) == bytes.empty() || !HasRoom(bytes.size(), key.size())) {
    return NoSpace("bucket full: " + path_);
  }
  IndexEntry e;
  e.slot = next_slot_;
  e.kind = kind;
  e.key = key;
  e.version = version;
  e.offset = used_;
  e.length = bytes.size();
  e.checksum = checksum;
  e.written_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  if ((e.length > 0 &&
       !WriteAt(blocks_.get(), H5T_NATIVE_UINT8, e.offset, e.length, bytes.data())) ||
      !WriteAt(blocks_.get(), H5T_NATIVE_UINT8, e.offset + e.length, key.size(), key.data())) {
    return Err("cannot write block bytes", path_);  // nothing reserved: the next block reuses it
  }
  // Reserve in 64-byte steps so every block starts aligned (for direct readers of the file).
  used_ += (e.length + key.size() + 63) / 64 * 64;
  if (used_ > data_bytes_) used_ = data_bytes_;
  if (start_writeback && used_ - writeback_from_ >= kWritebackChunk) StartWriteback();
  ++next_slot_;
  staged_.push_back(e);
  return e;
}

Status BucketFile::Commit(bool fsync, const std::function<void(CommitStage)>& on_stage) {
  auto stage = [&](CommitStage s) {
    if (on_stage) on_stage(s);
  };
  if (staged_.empty()) return Status::Ok();
  stage(CommitStage::kBytesWritten);
  Status s = [&]() -> Status {
    // Bytes before the slots that name them; one fdatasync at the end covers both (see the
    // header: recovery's checksums catch a slot whose bytes a power loss kept off the disk).
    if (H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0) return Err("H5Fflush failed", path_);
    stage(CommitStage::kBytesFlushed);
    MC_RETURN_IF_ERROR(WriteStagedSlots());
    stage(CommitStage::kIndexWritten);
    if (H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0) return Err("H5Fflush failed", path_);
    stage(CommitStage::kIndexFlushed);
    MC_RETURN_IF_ERROR(Sync(fsync, /*flush=*/false));
    stage(CommitStage::kSynced);
    return Status::Ok();
  }();
  staged_.clear();
  if (!s.ok()) {
    failed_ = true;
    return s;
  }
  committed_slots_ = next_slot_;
  return Status::Ok();
}

// The staged slots are consecutive ([committed_slots_, next_slot_)): one hyperslab write.
Status BucketFile::WriteStagedSlots() {
  std::vector<RawEntry> raw(staged_.size());
  for (size_t i = 0; i < staged_.size(); ++i) {
    const IndexEntry& e = staged_[i];
    raw[i].kind = static_cast<uint32_t>(e.kind);
    raw[i].key_length = static_cast<uint32_t>(e.key.size());
    raw[i].version = e.version;
    raw[i].key_checksum = Checksum64(e.key.data(), e.key.size());
    raw[i].offset = e.offset;
    raw[i].length = e.length;
    raw[i].checksum = e.checksum;
    raw[i].written_ns = e.written_ns;
  }
  if (!WriteAt(index_.get(), entry_type_.get(), committed_slots_, raw.size(), raw.data())) {
    return Err("cannot write index entries", path_);
  }
  return Status::Ok();
}

Status BucketFile::Sync(bool fsync, bool flush) {
  if (flush && H5Fflush(file_.get(), H5F_SCOPE_LOCAL) < 0) return Err("H5Fflush failed", path_);
  if (!fsync) return Status::Ok();
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file_.get(), H5P_DEFAULT, &handle) < 0 || handle == nullptr) {
    return Err("no file descriptor", path_);
  }
  if (fdatasync(*static_cast<int*>(handle)) != 0) return Err("fdatasync failed", path_);
  if (on_sync_) MC_RETURN_IF_ERROR(on_sync_(SyncKind::kFileData, path_));
  if (folder_synced_) return Status::Ok();
  // After the file's own sync: the name then points at durable bytes and slots.
  MC_RETURN_IF_ERROR(SyncDirectory(fs::path(path_).parent_path().string(), on_sync_));
  folder_synced_ = true;
  return Status::Ok();
}

Status SyncDirectory(const std::string& dir, const SyncHook& on_sync) {
  const std::string name = dir.empty() ? "." : dir;
  const int fd = open(name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return IoError("cannot open folder " + name + " to fsync it: " + std::strerror(errno));
  const bool ok = fsync(fd) == 0;
  const int error = errno;
  close(fd);
  if (!ok) return IoError("fsync of folder " + name + " failed: " + std::strerror(error));
  if (on_sync) MC_RETURN_IF_ERROR(on_sync(SyncKind::kDirectory, name));
  return Status::Ok();
}

// Asynchronous: the disk starts on the bytes written since the last call while the next blocks
// are written, so the group's fdatasync waits only for the tail. Best effort: any write error
// is still reported by that fdatasync. Bytes HDF5 still holds in its sieve buffer (small
// blocks) go at the commit's flush.
void BucketFile::StartWriteback() {
  if (int fd = RawFd(); fd >= 0) {
    (void)sync_file_range(fd, static_cast<off64_t>(raw_address_.load() + writeback_from_),
                          static_cast<off64_t>(used_ - writeback_from_), SYNC_FILE_RANGE_WRITE);
  }
  writeback_from_ = used_;
}

int BucketFile::RawFd() const {
  if (raw_fd_.load(std::memory_order_acquire) < 0) {
    haddr_t address = H5Dget_offset(blocks_.get());
    void* handle = nullptr;
    if (address != HADDR_UNDEF && H5Fget_vfd_handle(file_.get(), H5P_DEFAULT, &handle) >= 0 &&
        handle != nullptr) {
      raw_address_.store(address, std::memory_order_relaxed);
      raw_fd_.store(*static_cast<int*>(handle), std::memory_order_release);
    }
  }
  return raw_fd_.load(std::memory_order_acquire);
}

Status BucketFile::ReadData(uint64_t offset, std::span<std::byte> out) const {
  if (offset > data_bytes_ || out.size() > data_bytes_ - offset) {
    return Corrupt("block range beyond /blocks in " + path_);
  }
  if (out.empty()) return Status::Ok();
  // The index entry naming these bytes became visible only after they were written and
  // H5Fflush'ed to the OS, so reading the file directly sees them; HDF5 state is untouched.
  if (int fd = RawFd(); fd >= 0) {
    const uint64_t base = raw_address_.load(std::memory_order_relaxed) + offset;
    size_t done = 0;
    while (done < out.size()) {
      ssize_t n = pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(base + done));
      if (n <= 0)
        return Err(n == 0 ? "block bytes past the end of the file" : "pread failed", path_);
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }
  if (!ReadAt(blocks_.get(), H5T_NATIVE_UINT8, offset, out.size(), out.data())) {
    return Err("cannot read block bytes", path_);
  }
  return Status::Ok();
}

Result<std::vector<IndexEntry>> BucketFile::ReadIndex() const {
  std::vector<RawEntry> raw(max_entries_);
  if (max_entries_ > 0 && !ReadAt(index_.get(), entry_type_.get(), 0, max_entries_, raw.data())) {
    return Err("cannot read /index", path_);
  }
  std::vector<IndexEntry> out;
  for (uint32_t i = 0; i < max_entries_; ++i) {
    if (raw[i].kind == static_cast<uint32_t>(SlotKind::kUnused)) continue;
    IndexEntry e;
    e.slot = i;
    e.kind = raw[i].kind == static_cast<uint32_t>(SlotKind::kTombstone) ? SlotKind::kTombstone
                                                                        : SlotKind::kBlock;
    e.version = raw[i].version;
    const uint64_t key_at = raw[i].offset + raw[i].length;
    e.key_intact = raw[i].kind <= static_cast<uint32_t>(SlotKind::kTombstone) &&
                   raw[i].key_length > 0 && raw[i].key_length <= kMaxSlotKeyBytes &&
                   key_at >= raw[i].offset && key_at <= data_bytes_ &&
                   raw[i].key_length <= data_bytes_ - key_at;
    if (e.key_intact) {
      e.key.resize(raw[i].key_length);
      e.key_intact = ReadData(key_at, std::as_writable_bytes(std::span(e.key))).ok() &&
                     Checksum64(e.key.data(), e.key.size()) == raw[i].key_checksum;
    }
    if (!e.key_intact) e.key.clear();
    e.offset = raw[i].offset;
    e.length = raw[i].length;
    e.checksum = raw[i].checksum;
    e.written_ns = raw[i].written_ns;
    out.push_back(std::move(e));
  }
  return out;
}

Result<BucketAttributes> BucketFile::ReadAttributes() const {
  BucketAttributes a;
  hid_t f = file_.get();
  bool ok = ReadScalar(f, "format_version", H5T_NATIVE_UINT32, &a.format_version) &&
            ReadString(f, "cluster_id", &a.cluster_id) &&
            ReadString(f, "model_preset", &a.model_preset) &&
            ReadString(f, "kv_layout", &a.kv_layout) &&
            ReadScalar(f, "block_tokens", H5T_NATIVE_UINT32, &a.block_tokens) &&
            ReadScalar(f, "store_rank", H5T_NATIVE_INT32, &a.store_rank);
  if (!ok) return Err("missing file attributes", path_);
  return a;
}

}  // namespace mooncake::store::hdf5

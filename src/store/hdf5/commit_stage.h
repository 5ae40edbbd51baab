// CommitStage: the steps of a group commit of the SSD tier (BucketFile::Commit), named for the
// tier's test hook (Hdf5TierOptions::on_commit_stage). No HDF5 here: tests include it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"

namespace mooncake::store::hdf5 {

// The steps of BucketFile::Commit, in order (Hdf5TierOptions::on_commit_stage, crash tests).
enum class CommitStage : uint8_t {
  kBytesWritten,  // every staged block's bytes handed to HDF5, nothing flushed yet
  kBytesFlushed,  // H5Fflush: the bytes are in the OS
  kIndexWritten,  // the staged slots handed to HDF5
  kIndexFlushed,  // H5Fflush: the slots are in the OS (a killed process keeps them)
  kSynced,        // fdatasync done (fsync on) or skipped: the group is acknowledged next
};

// The syncs a group commit makes with fsync on, in this order (Hdf5TierOptions::on_sync). The
// bytes and then the index slots reach the OS first (kBytesFlushed, kIndexFlushed); they share
// one file, so one fdatasync makes both durable.
enum class SyncKind : uint8_t {
  kFileData,   // fdatasync of the bucket file: its block bytes and index slots
  kDirectory,  // fsync of the tier's folder: a new bucket file's name (its first commit only)
};

// Runs after each sync with the synced path; a non-OK status fails that sync as the system
// call's error would (fault injection). Empty: no hook.
using SyncHook = std::function<Status(SyncKind kind, const std::string& path)>;

}  // namespace mooncake::store::hdf5

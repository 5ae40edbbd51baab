// CommitStage: the steps of a group commit of the SSD tier (BucketFile::Commit), named for the
// tier's test hook (Hdf5TierOptions::on_commit_stage). No HDF5 here: tests include it.
#pragma once

#include <cstdint>

namespace mooncake::store::hdf5 {

// The steps of BucketFile::Commit, in order (Hdf5TierOptions::on_commit_stage, crash tests).
enum class CommitStage : uint8_t {
  kBytesWritten,  // every staged block's bytes handed to HDF5, nothing flushed yet
  kBytesFlushed,  // H5Fflush: the bytes are in the OS
  kIndexWritten,  // the staged slots handed to HDF5
  kIndexFlushed,  // H5Fflush: the slots are in the OS (a killed process keeps them)
  kSynced,        // fdatasync done (fsync on) or skipped: the group is acknowledged next
};

}  // namespace mooncake::store::hdf5

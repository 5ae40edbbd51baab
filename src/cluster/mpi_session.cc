#include "cluster/mpi_session.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

#include <thread>

namespace mooncake::cluster {

Result<std::unique_ptr<MpiSession>> MpiSession::Init(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return Internal("MPI was already initialised");
  if (MPI_Init(argc, argv) != MPI_SUCCESS) return Internal("MPI_Init failed");
  std::unique_ptr<MpiSession> s(new MpiSession());
  MPI_Comm_rank(MPI_COMM_WORLD, &s->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &s->size_);
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  s->hostname_.assign(name, len);
  return s;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::vector<std::vector<std::byte>> MpiSession::AllGather(std::span<const std::byte> mine) const {
  int my_size = static_cast<int>(mine.size());
  std::vector<int> sizes(size_);
  MPI_Allgather(&my_size, 1, MPI_INT, sizes.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> displs(size_);
  int total = 0;
  for (int i = 0; i < size_; ++i) {
    displs[i] = total;
    total += sizes[i];
  }
  std::vector<std::byte> all(total);
  MPI_Allgatherv(mine.data(), my_size, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE,
                 MPI_COMM_WORLD);
  std::vector<std::vector<std::byte>> out(size_);
  for (int i = 0; i < size_; ++i) {
    out[i].assign(all.begin() + displs[i], all.begin() + displs[i] + sizes[i]);
  }
  return out;
}

std::vector<std::vector<std::byte>> MpiSession::Gather(std::span<const std::byte> mine,
                                                       int root) const {
  int my_size = static_cast<int>(mine.size());
  std::vector<int> sizes(rank_ == root ? size_ : 0);
  MPI_Gather(&my_size, 1, MPI_INT, sizes.data(), 1, MPI_INT, root, MPI_COMM_WORLD);
  std::vector<int> displs(sizes.size());
  int total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    displs[i] = total;
    total += sizes[i];
  }
  std::vector<std::byte> all(total);
  MPI_Gatherv(mine.data(), my_size, MPI_BYTE, all.data(), sizes.data(), displs.data(), MPI_BYTE,
              root, MPI_COMM_WORLD);
  std::vector<std::vector<std::byte>> out(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    out[i].assign(all.begin() + displs[i], all.begin() + displs[i] + sizes[i]);
  }
  return out;
}

Status MpiSession::Barrier(Nanos timeout) const {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  SteadyClock clock;
  const Nanos deadline = clock.Now() + timeout;
  int done = 0;
  Nanos sleep(1'000);
  for (;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return Status::Ok();
    if (clock.Now() > deadline) {
      // The request cannot be cancelled portably; the caller aborts the job.
      return Timeout("MPI barrier not reached by every rank within " +
                     std::to_string(timeout.count() / 1'000'000) + " ms");
    }
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, Nanos(500'000));
  }
}

void MpiSession::Abort(int code) const {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {  // after Leave: nothing to abort collectively; this rank ends itself
    std::fflush(nullptr);
    std::_Exit(code);
  }
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

void MpiSession::Leave() const {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace mooncake::cluster

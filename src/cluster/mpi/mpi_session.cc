#include "cluster/mpi/mpi_session.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

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
  // Errors come back as values: a collective step that fails (a peer's connection lost) is
  // reported by the step, naming it, rather than aborting the rank inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return s;
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiSession::Abort(int code) const {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {  // after Leave: nothing to abort collectively; this rank ends itself
    std::fflush(nullptr);
    std::_Exit(code);
  }
  std::fflush(nullptr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

void MpiSession::Leave() const {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace mooncake::cluster

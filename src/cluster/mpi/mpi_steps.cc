// MpiSession's collective steps with a deadline (mpi_session.h says why): nonblocking MPI polled
// with short sleeps, and arrival messages that let the root name the ranks that never came.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cluster/mpi/mpi_session.h"

namespace mooncake::cluster {
namespace {

// Arrival tags cycle below 32767, the least MPI_TAG_UB the standard allows; steps are collective,
// so every rank counts them alike.
constexpr int kArrivalTagBase = 7000;
constexpr int kArrivalTags = 20000;

std::string MpiError(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, len);
}

// Tests `requests` until all have completed or `deadline` passes. Sleeps between tests (1 us
// doubling to 0.5 ms) leave the CPU to the ranks that have not arrived yet.
Status Await(std::vector<MPI_Request>& requests, Nanos deadline) {
  SteadyClock clock;
  Nanos sleep(1'000);
  for (;;) {
    int done = 0;
    int rc =
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return PeerFailure("MPI reported: " + MpiError(rc));
    if (done) return Status::Ok();
    if (clock.Now() > deadline) return Timeout("");
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, Nanos(500'000));
  }
}

// One step's state. Pending MPI operations may still write into it after a failed step (MPI
// cannot cancel a collective), so a failed step leaks it on purpose; the job ends right after.
struct Step {
  int one = 1;
  std::vector<int> arrived;             // root: one flag per rank
  std::vector<MPI_Request> arrivals;    // root: a receive per other rank; else the one send
  std::vector<int> sizes;               // per rank, bytes contributed
  std::vector<int> displs;              // per rank, offset in `all`
  std::vector<std::byte> all;           // every contribution, back to back
  std::vector<MPI_Request> collective;  // the step's current collective operation
};

// Every rank but the root tells the root that it reached the step, before it joins the step's
// collective: the root then knows who never came.
void PostArrivals(Step& s, int rank, int size, int root, int tag) {
  if (rank == root) {
    s.arrived.assign(size, 0);
    s.arrived[root] = 1;
    for (int r = 0; r < size; ++r) {
      if (r == root) continue;
      s.arrivals.emplace_back();
      MPI_Irecv(&s.arrived[r], 1, MPI_INT, r, tag, MPI_COMM_WORLD, &s.arrivals.back());
    }
  } else {
    s.arrivals.emplace_back();
    MPI_Isend(&s.one, 1, MPI_INT, root, tag, MPI_COMM_WORLD, &s.arrivals.back());
  }
}

// After the collective completed every arrival was posted; finish them so that none lingers into
// a later step. One that cannot finish (its sender died since) is cancelled.
void FinishArrivals(Step& s, Nanos deadline) {
  if (Await(s.arrivals, deadline).ok()) return;
  for (auto& r : s.arrivals) {
    if (r == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&r);
    MPI_Request_free(&r);
  }
}

// The failed step's message; on the root, also the ranks that never arrived (`*missing`).
Status StepFailed(Step& s, const Status& why, int rank, int root, std::string_view step,
                  Nanos timeout, std::vector<int>* missing) {
  missing->clear();
  if (why.code() != ErrorCode::kTimeout) {
    return why.WithContext(fmt::format("step '{}' failed on rank {}", step, rank));
  }
  if (rank != root) return StepTimeout(step, timeout, rank, root, *missing);
  for (auto& r : s.arrivals) {
    int done = 0;
    if (r != MPI_REQUEST_NULL) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
  }
  for (size_t r = 0; r < s.arrived.size(); ++r) {
    if (s.arrived[r] == 0) missing->push_back(static_cast<int>(r));
  }
  return StepTimeout(step, timeout, rank, root, *missing);
}

Records Split(const Step& s) {
  Records out(s.sizes.size());
  for (size_t i = 0; i < s.sizes.size(); ++i) {
    out[i].assign(s.all.begin() + s.displs[i], s.all.begin() + s.displs[i] + s.sizes[i]);
  }
  return out;
}

void Lay(Step& s) {
  s.displs.assign(s.sizes.size(), 0);
  int total = 0;
  for (size_t i = 0; i < s.sizes.size(); ++i) {
    s.displs[i] = total;
    total += s.sizes[i];
  }
  s.all.resize(total);
}

}  // namespace

Result<Records> MpiSession::DoAllGather(std::span<const std::byte> mine, std::string_view step,
                                        Nanos timeout) const {
  SteadyClock clock;
  const Nanos deadline = clock.Now() + timeout;
  auto s = std::make_unique<Step>();
  PostArrivals(*s, rank_, size_, 0, kArrivalTagBase + steps_++ % kArrivalTags);
  int my_size = static_cast<int>(mine.size());
  s->sizes.resize(size_);
  s->collective.resize(1);
  MPI_Iallgather(&my_size, 1, MPI_INT, s->sizes.data(), 1, MPI_INT, MPI_COMM_WORLD,
                 s->collective.data());
  Status st = Await(s->collective, deadline);
  if (st.ok()) {
    Lay(*s);
    MPI_Iallgatherv(mine.data(), my_size, MPI_BYTE, s->all.data(), s->sizes.data(),
                    s->displs.data(), MPI_BYTE, MPI_COMM_WORLD, s->collective.data());
    st = Await(s->collective, deadline);
  }
  if (!st.ok()) {
    Status failed = StepFailed(*s, st, rank_, 0, step, timeout, &missing_);
    (void)s.release();  // MPI may still write into it (see Step)
    return failed;
  }
  FinishArrivals(*s, deadline);
  return Split(*s);
}

Result<Records> MpiSession::DoGather(std::span<const std::byte> mine, int root,
                                     std::string_view step, Nanos timeout) const {
  SteadyClock clock;
  const Nanos deadline = clock.Now() + timeout;
  auto s = std::make_unique<Step>();
  PostArrivals(*s, rank_, size_, root, kArrivalTagBase + steps_++ % kArrivalTags);
  int my_size = static_cast<int>(mine.size());
  s->sizes.resize(rank_ == root ? size_ : 0);
  s->collective.resize(1);
  MPI_Igather(&my_size, 1, MPI_INT, s->sizes.data(), 1, MPI_INT, root, MPI_COMM_WORLD,
              s->collective.data());
  Status st = Await(s->collective, deadline);
  if (st.ok()) {
    Lay(*s);
    MPI_Igatherv(mine.data(), my_size, MPI_BYTE, s->all.data(), s->sizes.data(), s->displs.data(),
                 MPI_BYTE, root, MPI_COMM_WORLD, s->collective.data());
    st = Await(s->collective, deadline);
  }
  if (!st.ok()) {
    Status failed = StepFailed(*s, st, rank_, root, step, timeout, &missing_);
    (void)s.release();  // MPI may still write into it (see Step)
    return failed;
  }
  FinishArrivals(*s, deadline);
  return Split(*s);
}

Status MpiSession::DoBarrier(Nanos timeout, std::string_view step) const {
  SteadyClock clock;
  const Nanos deadline = clock.Now() + timeout;
  auto s = std::make_unique<Step>();
  PostArrivals(*s, rank_, size_, 0, kArrivalTagBase + steps_++ % kArrivalTags);
  s->collective.resize(1);
  MPI_Ibarrier(MPI_COMM_WORLD, s->collective.data());
  Status st = Await(s->collective, deadline);
  if (!st.ok()) {
    Status failed = StepFailed(*s, st, rank_, 0, step, timeout, &missing_);
    (void)s.release();  // MPI may still write into it (see Step)
    return failed;
  }
  FinishArrivals(*s, deadline);
  return Status::Ok();
}

}  // namespace mooncake::cluster

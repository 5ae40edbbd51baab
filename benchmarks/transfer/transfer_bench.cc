// transfer_bench: READ/WRITE bandwidth and latency of the transport between rank pairs, in the
// manner of Mooncake's transfer_engine_bench. Run under mpirun with an even number of ranks:
// rank 2k initiates against rank 2k+1. See docs/TRANSFER.md.
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cluster/mpi/mpi_session.h"
#include "common/log.h"
#include "common/units.h"
#include "common/wire.h"
#include "transfer_bench_options.h"
#include "transfer_bench_run.h"
#include "transfer_bench_setup.h"

namespace mooncake::bench {
namespace {

std::vector<std::byte> EncodeResult(const CaseResult& r, bool valid) {
  WireWriter w;
  w.Put<uint8_t>(valid ? 1 : 0);
  w.PutString(r.label);
  w.PutString(r.op);
  for (uint64_t v : {uint64_t(r.block_size), uint64_t(r.batch_size), uint64_t(r.depth),
                     uint64_t(r.threads), r.requests, r.bytes}) {
    w.Put(v);
  }
  for (double v : {r.seconds, r.gbps, r.requests_per_s, r.p50_us, r.p99_us, r.p999_us}) w.Put(v);
  w.PutString(r.verified);
  return w.Take();
}

bool DecodeResult(std::span<const std::byte> b, CaseResult* r) {
  WireReader in(b);
  uint8_t valid = 0;
  uint64_t v[6] = {};
  in.Get(&valid);
  in.GetString(&r->label, 4096);
  in.GetString(&r->op, 64);
  for (auto& x : v) in.Get(&x);
  for (double* d :
       {&r->seconds, &r->gbps, &r->requests_per_s, &r->p50_us, &r->p99_us, &r->p999_us}) {
    in.Get(d);
  }
  in.GetString(&r->verified, 4096);
  r->block_size = v[0];
  r->batch_size = v[1];
  r->depth = v[2];
  r->threads = static_cast<int>(v[3]);
  r->requests = v[4];
  r->bytes = v[5];
  return in.done() && valid;
}

void PrintHeader(FILE* f) {
  std::fprintf(f, "%-5s %-28s %-5s %10s %6s %5s %12s %10s %10s %10s %10s %s\n", "pair", "size",
               "op", "block", "batch", "depth", "requests/s", "GB/s", "p50_us", "p99_us", "p999_us",
               "verified");
}

void PrintRow(FILE* f, int pair, const CaseResult& r) {
  std::fprintf(f, "%-5d %-28s %-5s %10zu %6zu %5zu %12.0f %10.3f %10.3f %10.1f %10.1f %s\n", pair,
               r.label.c_str(), r.op.c_str(), r.block_size, r.batch_size, r.depth, r.requests_per_s,
               r.gbps, r.p50_us, r.p99_us, r.p999_us, r.verified.c_str());
  std::fflush(f);
}

const char* kCsvHeader =
    "pair,size,op,block_bytes,batch,depth,threads,requests,bytes,seconds,GB_s,requests_s,p50_us,"
    "p99_us,p999_us,verified,tls,path,footprint_bytes,rma_slice,am_slice\n";

int Main(int argc, char** argv) {
  auto mpi_or = cluster::MpiSession::Init(&argc, &argv);
  if (!mpi_or.ok()) {
    std::fprintf(stderr, "transfer_bench: %s\n", mpi_or.status().ToString().c_str());
    return 1;
  }
  auto& mpi = **mpi_or;
  auto opt_or = ParseBenchOptions(argc, argv, mpi.rank() == 0);
  if (!opt_or.ok()) {
    if (mpi.rank() == 0 && opt_or.status().code() != ErrorCode::kNotFound) {
      std::fprintf(stderr, "transfer_bench: %s\n", opt_or.status().ToString().c_str());
    }
    return opt_or.status().code() == ErrorCode::kNotFound ? 0 : 2;
  }
  BenchOptions& opt = *opt_or;
  if (mpi.size() < 2 || mpi.size() % 2 != 0) {
    if (mpi.rank() == 0) std::fprintf(stderr, "transfer_bench: needs an even number of ranks\n");
    return 2;
  }
  const bool initiator = mpi.rank() % 2 == 0;
  const Rank peer{initiator ? mpi.rank() + 1 : mpi.rank() - 1};
  const uint64_t target_seed = 1000 + (initiator ? peer.value : mpi.rank());

  auto conn = ConnectUcx(mpi, opt.ucx, {opt.registered_bytes}, opt.transport_memory);
  if (!conn.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", mpi.rank(), conn.status().ToString().c_str());
    mpi.Abort(1);
  }
  auto* buffer = static_cast<std::byte*>(conn->local[0].addr);
  // Both sides start with the target's pattern (see RunCase's invariant).
  FillPattern(target_seed, 0, std::span<std::byte>(buffer, opt.registered_bytes));
  const Nanos barrier_timeout = opt.timeout * 4;
  if (Status b = mpi.Barrier(barrier_timeout); !b.ok()) mpi.Abort(1);
  const std::string path = conn->transport->DescribePath(Rank{1});
  FILE* csv = nullptr;
  if (mpi.rank() == 0) {
    std::printf(
        "transfer_bench: %d ranks (%d pairs), tls=%s, path rank 0 -> 1: %s, "
        "rma slice %s, am slice %s, progress %s, memory %s\n",
        mpi.size(), mpi.size() / 2, opt.tls_label.c_str(), path.c_str(),
        FormatBytes(opt.ucx.rma_slice).c_str(), FormatBytes(opt.ucx.am_slice).c_str(),
        opt.ucx.busy_poll ? "busy-poll" : "thread with back-off",
        conn->transport_memory ? "transport-allocated (shared)" : "heap, registered");
    PrintHeader(stdout);
    if (!opt.csv.empty()) {
      csv = std::fopen(opt.csv.c_str(), "w");
      if (csv == nullptr) std::fprintf(stderr, "cannot write %s\n", opt.csv.c_str());
      if (csv) std::fputs(kCsvHeader, csv);
    }
  }
  int failures = 0;
  for (const CaseSpec& spec : opt.cases) {
    CaseResult result;
    bool valid = false;
    if (initiator) {
      Target t{conn->transport.get(),  peer,       buffer, conn->remote[peer.value][0].addr,
               opt.FootprintFor(spec), target_seed};
      auto r = RunCase(spec, t);
      if (r.ok()) {
        result = *r;
        valid = true;
      } else {
        std::fprintf(stderr, "rank %d, %s %s: %s\n", mpi.rank(), spec.label.c_str(),
                     spec.op == transport::OpKind::kRead ? "read" : "write",
                     r.status().ToString().c_str());
      }
    }
    // Targets wait for the initiators in Barrier, which sleeps between polls: a blocking MPI
    // collective busy-polls, and on a rank bound to one core that spin took the core from the
    // target's UCX progress thread, which on tcp has to receive the bytes.
    if (Status b = mpi.Barrier(spec.warmup + spec.duration + barrier_timeout); !b.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", mpi.rank(), b.ToString().c_str());
      mpi.Abort(1);
    }
    auto all = mpi.Gather(EncodeResult(result, valid), 0);
    if (mpi.rank() == 0) {
      double total = 0;
      for (size_t r = 0; r < all.size(); r += 2) {
        CaseResult pr;
        if (!DecodeResult(all[r], &pr)) {
          ++failures;
          std::printf("%-5zu %-28s FAILED (see stderr)\n", r / 2, spec.label.c_str());
          continue;
        }
        total += pr.gbps;
        PrintRow(stdout, static_cast<int>(r / 2), pr);
        if (csv) {
          std::fprintf(csv,
                       "%zu,%s,%s,%zu,%zu,%zu,%d,%lu,%lu,%.6f,%.4f,%.1f,%.3f,%.3f,%.3f,%s,%s,"
                       "\"%s\",%zu,%zu,%zu\n",
                       r / 2, pr.label.c_str(), pr.op.c_str(), pr.block_size, pr.batch_size,
                       pr.depth, pr.threads, (unsigned long)pr.requests, (unsigned long)pr.bytes,
                       pr.seconds, pr.gbps, pr.requests_per_s, pr.p50_us, pr.p99_us, pr.p999_us,
                       pr.verified.c_str(), opt.tls_label.c_str(), path.c_str(),
                       opt.FootprintFor(spec), opt.ucx.rma_slice, opt.ucx.am_slice);
          std::fflush(csv);
        }
      }
      if (all.size() > 2)
        std::printf("%-5s %-28s total %.3f GB/s\n", "all", spec.label.c_str(), total);
    }
    Status b = mpi.Barrier(barrier_timeout);
    if (!b.ok()) {
      std::fprintf(stderr, "rank %d: %s\n", mpi.rank(), b.ToString().c_str());
      mpi.Abort(1);
    }
  }
  if (csv) std::fclose(csv);
  Status s = Shutdown(mpi, *conn, barrier_timeout);
  if (!s.ok()) std::fprintf(stderr, "rank %d: shutdown: %s\n", mpi.rank(), s.ToString().c_str());
  if (mpi.rank() == 0) std::printf("transfer_bench: %s\n", failures == 0 ? "OK" : "FAILED");
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace mooncake::bench

int main(int argc, char** argv) { return mooncake::bench::Main(argc, argv); }

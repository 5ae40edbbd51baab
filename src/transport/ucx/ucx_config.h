// Configuration of the UCX backend. Declared next to the code that uses it (STYLE.md).
#pragma once

#include <cstddef>
#include <string>

#include "common/clock.h"

namespace mooncake::transport {

// How READ/WRITE bytes move. RMA (ucp_put/get) is fast on shared memory (posix/cma) and RDMA; on
// tcp UCX 1.13 emulates RMA over small active messages (149 MiB/s at 16 MiB, ENVIRONMENT.md), so
// there we move the bytes with active-message rendezvous straight into the registered target.
// kAuto picks per endpoint from the UCX transports its lanes use, and copies directly (memcpy,
// no UCX call) into and out of a peer's region that UCX mapped here (ucp_rkey_ptr: memory from
// AllocateMemory on a same-host peer). kRma always goes through ucp_put/get_nbx.
enum class DataPath { kAuto, kRma, kActiveMessage };

struct UcxConfig {
  std::string tls;      // raw UCX_TLS list ("posix,cma,self"); empty keeps UCX's default
  std::string devices;  // raw UCX_NET_DEVICES; empty keeps UCX's default
  DataPath data_path = DataPath::kAuto;
  // RMA requests are cut into slices of this size. 1 MiB by measurement (docs/TRANSFER.md): on
  // shm a slice is one memcpy inside ucp_put/get, and 64 KiB slices cost 1 MiB reads ~20 %.
  size_t rma_slice = 1024 * 1024;
  size_t am_slice = 4 * 1024 * 1024;  // AM-path requests are cut into slices of this size
  // The tcp transport's receive segment (UCX_TCP_RX_SEG_SIZE, UCX's default 64K). 512K by
  // measurement (docs/TRANSFER.md: tcp 1-16 MiB reads ~1.4x, writes ~1.3x on loopback, while
  // ucx_perftest does not gain from it). Empty keeps UCX's default or the environment's value.
  // Set in every process that may open tcp, job ranks and attached processes alike: UCX 1.13's
  // tcp sizes the active messages it sends (eager sends and their fragments) by its own receive
  // segment and aborts a receiver whose segment is smaller (tcp_ep.c "Assertion `hdr->length
  // <= ...`"), so the two ends of a tcp connection must agree on it.
  std::string tcp_rx_seg_size = "512K";
  // Error mode of the endpoints between job ranks over tcp. UCX 1.13's peer error mode needs
  // memory invalidation, which its tcp memory domain lacks, so with it UCX selects no tcp lane
  // for rendezvous RMA: every rendezvous then travels as active-message fragments that the
  // receiver copies out of its receive segment (one more pass over the bytes, and 1 MiB more of
  // cache). UCX's default mode keeps put-zcopy rendezvous (the receiving socket reads straight
  // into the target buffer): 1 MiB writes ~1.3x, reads ~1.15x (docs/TRANSFER.md). Our error
  // handler stays installed either way (a peer that exits or dies resets its connection, which
  // fails the endpoint, as for attached processes); true restores the peer mode (UCX's
  // keepalive and request-id checks). Only for jobs pinned to tcp without shm or rdma.
  bool tcp_peer_error_mode = false;
  // UCX_RNDV_THRESH for tcp-only jobs (empty: UCX's default, or the environment's value). With
  // put-zcopy rendezvous UCX's automatic threshold is 8 KiB, and a 64 KiB message then pays
  // the rendezvous round trips: 64 KiB ~0.6x against eager sends. 256K by measurement. It
  // applies to the job's endpoints to attached processes too: messages up to it leave eagerly,
  // which they receive because their tcp receive segment is tcp_rx_seg_size as well (so it
  // must stay below tcp_rx_seg_size).
  std::string tcp_rndv_thresh = "256K";
  // The progress thread spins this long after its last event before it starts to sleep
  // (exponential back-off up to max_sleep). busy_poll never sleeps (benchmarks on pinned cores).
  Nanos idle_spin = Nanos(200'000);
  Nanos max_sleep = Nanos(200'000);
  bool busy_poll = false;
  // After idle_spin the progress thread sleeps on the worker's event fd (woken by an arriving
  // message) for at most this long before it looks again.
  Nanos max_event_wait = Nanos(5'000'000);
  // SendMessage drives progress for at most this long until a fragmented message has left.
  Nanos send_spin = Nanos(200'000);
  // Import maps a same-host peer's segment and faults all of it in at once (no 4 KiB fault at
  // each first copy). A caller that reads only parts of many peers' segments (mooncake p2p:
  // each rank reads 1/n of each of n peers) turns it off: populating whole segments cost 8
  // ranks x 1 GiB on 2 cores 33 s of system time against ~10 s faulting what is read.
  bool populate_imports = true;
};

// Maps the user-facing transport.tls value to a UCX_TLS list: auto -> "" (UCX decides),
// shm -> "posix,sysv,cma,self", tcp -> "tcp,self", rdma -> "rc,ud,self,posix,sysv,cma"; anything
// else is passed through as a raw UCX_TLS list.
std::string ResolveTls(const std::string& user_value);

// Which families a resolved UCX_TLS list names, token by token ("" = UCX's default, unknown).
struct TlsFamilies {
  bool pinned = false;  // an explicit list (not UCX's default)
  bool tcp = false;
  bool shm = false;   // posix, sysv, cma, knem, xpmem, or the shm/sm aliases
  bool rdma = false;  // rc*, ud*, dc*, ib, rdma
};
TlsFamilies ClassifyTls(const std::string& resolved_tls);
// Whether UCX may open a tcp interface under UCX_TLS = `ucx_tls` as UCX reads it back ("all",
// a list, or "^" and the transports left out).
bool TcpMayOpen(const std::string& ucx_tls);

}  // namespace mooncake::transport

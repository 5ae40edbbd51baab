// UcxTransport's memory: regions registered or allocated through UCX, exported as packed remote
// keys, and peers' descriptors imported (mapped directly where UCX allows).
#include <sys/mman.h>

#include "transport/ucx/ucx_impl.h"

namespace mooncake::transport {

Result<MemoryRegion> UcxTransport::RegisterMemory(void* addr, size_t length, MemoryType type) {
  if (addr == nullptr || length == 0) return InvalidArgument("cannot register an empty region");
  ucp_mem_map_params_t mp{};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                  UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
  mp.address = addr;
  mp.length = length;
  mp.memory_type = type == MemoryType::kCuda ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST;
  ucp_mem_h memh = nullptr;
  ucs_status_t st = ucp_mem_map(context_.get(), &mp, &memh);
  if (st != UCS_OK) {
    if (type == MemoryType::kCuda) {
      return NotSupported("this UCX build cannot register CUDA memory: " +
                          std::string(ucs_status_string(st)));
    }
    return UcxError("ucp_mem_map of " + std::to_string(length) + " bytes", st);
  }
  std::lock_guard<std::mutex> lock(regions_mutex_);
  MemoryRegion region{next_region_id_++, addr, length, type};
  regions_.emplace(region.id, std::pair{region, UcpMem(memh, UcpMemDeleter{context_.get()})});
  local_ranges_.Insert(reinterpret_cast<uint64_t>(addr), length, region.id);
  return region;
}

Result<MemoryRegion> UcxTransport::AllocateMemory(size_t length, MemoryType type) {
  if (length == 0) return InvalidArgument("cannot allocate an empty region");
  if (type != MemoryType::kHost) return NotSupported("UCX allocates host memory only");
  ucp_mem_map_params_t mp{};
  mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                  UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  mp.address = nullptr;
  mp.length = length;
  mp.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h memh = nullptr;
  ucs_status_t st = ucp_mem_map(context_.get(), &mp, &memh);
  if (st != UCS_OK) return UcxError("ucp_mem_map (allocate " + std::to_string(length) + ")", st);
  ucp_mem_attr_t attr{};
  attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
  UcpMem owned(memh, UcpMemDeleter{context_.get()});
  if ((st = ucp_mem_query(memh, &attr)) != UCS_OK) return UcxError("ucp_mem_query", st);
  std::lock_guard<std::mutex> lock(regions_mutex_);
  // UCX may round the length up; expose what was asked for.
  MemoryRegion region{next_region_id_++, attr.address, length, type};
  regions_.emplace(region.id, std::pair{region, std::move(owned)});
  local_ranges_.Insert(reinterpret_cast<uint64_t>(attr.address), length, region.id);
  return region;
}

Status UcxTransport::UnregisterMemory(const MemoryRegion& region) {
  std::lock_guard<std::mutex> lock(regions_mutex_);
  auto it = regions_.find(region.id);
  if (it == regions_.end())
    return NotFound("region " + std::to_string(region.id) + " is not registered");
  local_ranges_.Erase(reinterpret_cast<uint64_t>(region.addr));
  regions_.erase(it);  // unmaps (UcpMem)
  return Status::Ok();
}

Result<RemoteDescriptor> UcxTransport::Export(const MemoryRegion& region) {
  std::lock_guard<std::mutex> lock(regions_mutex_);
  auto it = regions_.find(region.id);
  if (it == regions_.end())
    return NotFound("region " + std::to_string(region.id) + " is not registered");
  void* buffer = nullptr;
  size_t size = 0;
  ucs_status_t st = ucp_rkey_pack(context_.get(), it->second.second.get(), &buffer, &size);
  if (st != UCS_OK) return UcxError("ucp_rkey_pack", st);
  RemoteDescriptor d;
  d.addr = reinterpret_cast<uint64_t>(region.addr);
  d.length = region.length;
  d.type = region.type;
  auto* p = static_cast<const std::byte*>(buffer);
  d.packed_key.assign(p, p + size);
  ucp_rkey_buffer_release(buffer);
  return d;
}

namespace {
// Fills this process's page tables for a peer's mapped segment now. Otherwise the first copy to
// or from each 4 KiB page takes a minor fault (the page exists; this process has not mapped
// it), which showed as ~5 % of a first pass of 1 MiB puts. Best effort: older kernels lack
// MADV_POPULATE_WRITE (Linux 5.14) and then pages fault in on first use as before.
void PopulateMapping(void* addr, size_t length) {
#ifdef MADV_POPULATE_WRITE
  const uintptr_t page = 4096;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(addr) + length;
  (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)addr;
  (void)length;
#endif
}
}  // namespace

Status UcxTransport::Import(Rank owner, const RemoteDescriptor& d) {
  if (owner.value < 0 || owner.value >= slots_ || eps_.Get(owner.value) == nullptr) {
    return InvalidArgument("cannot import a descriptor of rank " + std::to_string(owner.value) +
                           " (not connected)");
  }
  auto holder = std::make_shared<RkeyHolder>();
  ucs_status_t st = ucp_ep_rkey_unpack(eps_.Get(owner.value), d.packed_key.data(), &holder->rkey);
  if (st != UCS_OK) {
    return ProtocolError("remote key of " + PeerName(owner.value) +
                         " does not unpack: " + ucs_status_string(st));
  }
  void* mapped = nullptr;
  if (ucp_rkey_ptr(holder->rkey, d.addr, &mapped) == UCS_OK) {
    holder->mapped = static_cast<std::byte*>(mapped);
    holder->remote_base = d.addr;
    if (config_.populate_imports) PopulateMapping(mapped, d.length);
  }
  auto replaced = imported_[owner.value]->Insert(d.addr, d.length, std::move(holder));
  if (replaced) {
    std::lock_guard<std::mutex> lock(regions_mutex_);
    retired_holders_.push_back(std::move(*replaced));
  }
  imports_version_.fetch_add(1, std::memory_order_release);
  return Status::Ok();
}

}  // namespace mooncake::transport

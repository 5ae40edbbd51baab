// The C API (mooncake_client.h) over the C++ client (client.h).
#include "client/mooncake_client.h"

#include <memory>
#include <string>
#include <vector>

#include "client/client.h"

struct mooncake_client {
  std::unique_ptr<mooncake::client::Client> client;
};

namespace {

using mooncake::ErrorCode;
using mooncake::Status;

thread_local std::string t_last_error;

mooncake_status_t Report(const Status& s) {
  if (!s.ok()) t_last_error = s.ToString();
  return static_cast<mooncake_status_t>(s.code());
}

mooncake_status_t NullArgument(const char* what) {
  return Report(mooncake::InvalidArgument(std::string(what) + " is NULL"));
}

// The value of `r` into *out (MOONCAKE_OK), or its error.
template <typename T, typename Out>
mooncake_status_t ReportInto(const mooncake::Result<T>& r, Out* out) {
  if (!r.ok()) return Report(r.status());
  *out = *r;
  return MOONCAKE_OK;
}

mooncake::client::PutOptions PutOptionsOf(const mooncake_put_options_t* o) {
  mooncake::client::PutOptions p;
  if (o != nullptr) {
    p.replicas = o->replicas;
    p.soft_pin = o->soft_pin != 0;
    p.hard_pin = o->hard_pin != 0;
    if (o->preferred_ranks != nullptr) {
      p.preferred_ranks.assign(o->preferred_ranks, o->preferred_ranks + o->preferred_rank_count);
    }
  }
  return p;
}

std::vector<std::string> Keys(size_t count, const char* const* keys) {
  std::vector<std::string> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) out.emplace_back(keys[i] != nullptr ? keys[i] : "");
  return out;
}

}  // namespace

extern "C" {

mooncake_status_t mooncake_client_connect(const char* connection_file,
                                          const mooncake_client_options_t* options,
                                          mooncake_client_t** client) {
  if (connection_file == nullptr) return NullArgument("connection_file");
  if (client == nullptr) return NullArgument("client");
  mooncake::client::ClientOptions o;
  if (options != nullptr) {
    if (options->timeout_ms > 0) o.timeout = std::chrono::milliseconds(options->timeout_ms);
    if (options->connect_timeout_ms > 0) {
      o.connect_timeout = std::chrono::milliseconds(options->connect_timeout_ms);
    }
    o.verify_checksum = options->verify_checksum != 0;
    if (options->transport_tls != nullptr) o.transport_tls = options->transport_tls;
  }
  auto c = mooncake::client::Client::Connect(connection_file, o);
  if (!c.ok()) return Report(c.status());
  *client = new mooncake_client{std::move(*c)};
  return MOONCAKE_OK;
}

void mooncake_client_close(mooncake_client_t* client) {
  if (client == nullptr) return;
  // Close waits for the calls other threads have in flight; if some outlive its wait, the handle
  // is left allocated (and its message is the last error): freeing it would crash them.
  Status s = client->client->Close();
  if (s.code() == ErrorCode::kBusy) {
    (void)Report(s);
    return;
  }
  delete client;
}

mooncake_status_t mooncake_put(mooncake_client_t* client, const char* key, const void* data,
                               size_t size, const mooncake_put_options_t* options) {
  if (client == nullptr || key == nullptr) return NullArgument("client or key");
  if (data == nullptr && size > 0) return NullArgument("data");
  return Report(client->client->PutFrom(key, data, size, PutOptionsOf(options)));
}

mooncake_status_t mooncake_get_into(mooncake_client_t* client, const char* key, void* buffer,
                                    size_t capacity, size_t* size) {
  if (client == nullptr || key == nullptr || size == nullptr) {
    return NullArgument("client, key or size");
  }
  return ReportInto(client->client->GetInto(key, buffer, capacity), size);
}

mooncake_status_t mooncake_get_size(mooncake_client_t* client, const char* key, uint64_t* size) {
  if (client == nullptr || key == nullptr || size == nullptr) {
    return NullArgument("client, key or size");
  }
  return ReportInto(client->client->GetSize(key), size);
}

mooncake_status_t mooncake_exists(mooncake_client_t* client, const char* key, int* exists) {
  if (client == nullptr || key == nullptr || exists == nullptr) {
    return NullArgument("client, key or exists");
  }
  Status s = client->client->Exists(key);
  *exists = s.ok() ? 1 : 0;
  return s.ok() || s.code() == ErrorCode::kNotFound ? MOONCAKE_OK : Report(s);
}

mooncake_status_t mooncake_remove(mooncake_client_t* client, const char* key) {
  if (client == nullptr || key == nullptr) return NullArgument("client or key");
  return Report(client->client->Remove(key));
}

mooncake_status_t mooncake_batch_put(mooncake_client_t* client, size_t count,
                                     const char* const* keys, const void* const* data,
                                     const size_t* sizes, const mooncake_put_options_t* options,
                                     mooncake_status_t* results) {
  if (client == nullptr || (count > 0 && (keys == nullptr || data == nullptr || sizes == nullptr ||
                                          results == nullptr))) {
    return NullArgument("client, keys, data, sizes or results");
  }
  std::vector<std::string> k = Keys(count, keys);
  std::vector<std::span<const std::byte>> v;
  for (size_t i = 0; i < count; ++i)
    v.emplace_back(static_cast<const std::byte*>(data[i]), sizes[i]);
  auto r = client->client->BatchPut(k, v, PutOptionsOf(options));
  mooncake_status_t first = MOONCAKE_OK;
  for (size_t i = 0; i < count; ++i) {
    results[i] = static_cast<mooncake_status_t>(r[i].code());
    if (first == MOONCAKE_OK && !r[i].ok()) first = Report(r[i]);
  }
  return first;
}

mooncake_status_t mooncake_batch_get_into(mooncake_client_t* client, size_t count,
                                          const char* const* keys, void* const* buffers,
                                          const size_t* capacities, size_t* sizes,
                                          mooncake_status_t* results) {
  if (client == nullptr ||
      (count > 0 && (keys == nullptr || buffers == nullptr || capacities == nullptr ||
                     sizes == nullptr || results == nullptr))) {
    return NullArgument("client, keys, buffers, capacities, sizes or results");
  }
  std::vector<std::string> k = Keys(count, keys);
  std::vector<std::span<std::byte>> outs;
  for (size_t i = 0; i < count; ++i) {
    outs.emplace_back(static_cast<std::byte*>(buffers[i]), capacities[i]);
  }
  auto r = client->client->BatchGetInto(k, outs);
  mooncake_status_t first = MOONCAKE_OK;
  for (size_t i = 0; i < count; ++i) {
    sizes[i] = r[i].ok() ? *r[i] : 0;
    results[i] = r[i].ok() ? MOONCAKE_OK : static_cast<mooncake_status_t>(r[i].status().code());
    if (first == MOONCAKE_OK && !r[i].ok()) first = Report(r[i].status());
  }
  return first;
}

mooncake_status_t mooncake_batch_exists(mooncake_client_t* client, size_t count,
                                        const char* const* keys, int* exists) {
  if (client == nullptr || (count > 0 && (keys == nullptr || exists == nullptr))) {
    return NullArgument("client, keys or exists");
  }
  auto r = client->client->BatchExists(Keys(count, keys));
  if (!r.ok()) return Report(r.status());
  for (size_t i = 0; i < count; ++i) exists[i] = (*r)[i];
  return MOONCAKE_OK;
}

mooncake_status_t mooncake_batch_remove(mooncake_client_t* client, size_t count,
                                        const char* const* keys, mooncake_status_t* results) {
  if (client == nullptr || (count > 0 && (keys == nullptr || results == nullptr))) {
    return NullArgument("client, keys or results");
  }
  std::vector<mooncake::Status> r = client->client->BatchRemove(Keys(count, keys));
  mooncake_status_t first = MOONCAKE_OK;
  for (size_t i = 0; i < count; ++i) {
    results[i] = static_cast<mooncake_status_t>(r[i].code());
    if (first == MOONCAKE_OK && !r[i].ok()) first = Report(r[i]);
  }
  return first;
}

mooncake_status_t mooncake_register_buffer(mooncake_client_t* client, void* addr, size_t size) {
  if (client == nullptr || addr == nullptr) return NullArgument("client or addr");
  return Report(client->client->RegisterBuffer(addr, size));
}

mooncake_status_t mooncake_unregister_buffer(mooncake_client_t* client, void* addr) {
  if (client == nullptr || addr == nullptr) return NullArgument("client or addr");
  return Report(client->client->UnregisterBuffer(addr));
}

const char* mooncake_last_error(void) { return t_last_error.c_str(); }

const char* mooncake_status_name(mooncake_status_t status) {
  return mooncake::ErrorCodeName(static_cast<ErrorCode>(status)).data();
}

const char* mooncake_client_version(void) { return MOONCAKE_VERSION_STRING; }

}  // extern "C"

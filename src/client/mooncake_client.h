/* The store's client, C API (docs/CLIENT.md): for engines and bindings in any language. The C++
 * API (client.h) is the reference for semantics; this wraps it with opaque handles and status
 * codes.
 *
 * Every function returns a mooncake_status_t (MOONCAKE_OK on success). After a failure,
 * mooncake_last_error() returns the message of the last failed call on the calling thread
 * (valid until that thread's next call). Handles may be shared by threads.
 * mooncake_client_close waits for the calls other threads have in flight before it frees the
 * handle; a thread must not start a call on a handle after it was closed. Installed as
 * <prefix>/include/mooncake/client/mooncake_client.h. */
#ifndef MOONCAKE_CLIENT_H_
#define MOONCAKE_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The values of mooncake::ErrorCode (common/status.h). */
typedef enum {
  MOONCAKE_OK = 0,
  MOONCAKE_INVALID_ARGUMENT = 1,
  MOONCAKE_OUT_OF_RANGE = 2,
  MOONCAKE_NOT_FOUND = 3,
  MOONCAKE_ALREADY_EXISTS = 4,
  MOONCAKE_NOT_SUPPORTED = 5,
  MOONCAKE_PERMISSION_DENIED = 6,
  MOONCAKE_NO_SPACE = 10,
  MOONCAKE_TIMEOUT = 11,
  MOONCAKE_BUSY = 12,
  MOONCAKE_LEASE_EXPIRED = 13,
  MOONCAKE_PEER_FAILURE = 20,
  MOONCAKE_CORRUPT = 21,
  MOONCAKE_IO_ERROR = 22,
  MOONCAKE_PROTOCOL_ERROR = 23,
  MOONCAKE_INTERNAL = 30
} mooncake_status_t;

typedef struct mooncake_client mooncake_client_t;

typedef struct {
  uint64_t timeout_ms;         /* deadline of every call; 0: 10000 */
  uint64_t connect_timeout_ms; /* of each attach; 0: 10000 */
  int verify_checksum;         /* nonzero (the default when options are NULL): verify reads */
  const char* transport_tls;   /* NULL or "auto" | "shm" | "tcp" | "rdma" | a UCX_TLS list */
} mooncake_client_options_t;

typedef struct {
  uint32_t replicas; /* 0: the store job's store.replicas */
  int soft_pin;
  int hard_pin;
  const int* preferred_ranks; /* NULL or store ranks tried first, in order (read during the call) */
  size_t preferred_rank_count; /* entries of preferred_ranks */
} mooncake_put_options_t;

/* Attaches to a store service job through its connection file. `options` may be NULL. */
mooncake_status_t mooncake_client_connect(const char* connection_file,
                                          const mooncake_client_options_t* options,
                                          mooncake_client_t** client);
/* Detaches and frees the handle (NULL is allowed), once the calls in flight on other threads
 * have returned. If some are still running after 2 x timeout + 35 s (a call may look for a new
 * master for 30 s, docs/CLIENT.md "When the master changes"), the handle is left
 * allocated, not freed under them (mooncake_last_error() says so). */
void mooncake_client_close(mooncake_client_t* client);

mooncake_status_t mooncake_put(mooncake_client_t* client, const char* key, const void* data,
                               size_t size, const mooncake_put_options_t* options);
/* Reads the object into `buffer` (`capacity` bytes); its size goes to *size. */
mooncake_status_t mooncake_get_into(mooncake_client_t* client, const char* key, void* buffer,
                                    size_t capacity, size_t* size);
mooncake_status_t mooncake_get_size(mooncake_client_t* client, const char* key, uint64_t* size);
/* *exists = 1 when the object is visible, 0 when not. */
mooncake_status_t mooncake_exists(mooncake_client_t* client, const char* key, int* exists);
mooncake_status_t mooncake_remove(mooncake_client_t* client, const char* key);

/* Batch forms: `results[i]` gets key i's status; the call returns the first failure (or OK). */
mooncake_status_t mooncake_batch_put(mooncake_client_t* client, size_t count,
                                     const char* const* keys, const void* const* data,
                                     const size_t* sizes, const mooncake_put_options_t* options,
                                     mooncake_status_t* results);
mooncake_status_t mooncake_batch_get_into(mooncake_client_t* client, size_t count,
                                          const char* const* keys, void* const* buffers,
                                          const size_t* capacities, size_t* sizes,
                                          mooncake_status_t* results);
mooncake_status_t mooncake_batch_exists(mooncake_client_t* client, size_t count,
                                        const char* const* keys, int* exists);
mooncake_status_t mooncake_batch_remove(mooncake_client_t* client, size_t count,
                                        const char* const* keys, mooncake_status_t* results);

/* Registers [addr, +size) for zero-copy transfers (RDMA); unregister by the same address. */
mooncake_status_t mooncake_register_buffer(mooncake_client_t* client, void* addr, size_t size);
mooncake_status_t mooncake_unregister_buffer(mooncake_client_t* client, void* addr);

/* The message of the calling thread's last failure ("" when none). */
const char* mooncake_last_error(void);
/* "NotFound", "Timeout", ... */
const char* mooncake_status_name(mooncake_status_t status);
/* "0.1.0" */
const char* mooncake_client_version(void);

#ifdef __cplusplus
}
#endif

#endif /* MOONCAKE_CLIENT_H_ */

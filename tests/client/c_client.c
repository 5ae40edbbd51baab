/* The C API from C (mooncake_client.h compiles as C and links): put, get, size, exists, remove
 * and the batch forms against a store job, and the key limit (1..4096 bytes) in each. Prints
 * "c_client OK" and exits 0 when all hold. c_client CONNECT_FILE PREFIX */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/mooncake_client.h"

#define CHECK(cond, what)                                                        \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "c_client: %s failed: %s\n", what, mooncake_last_error()); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: c_client CONNECT_FILE PREFIX\n");
    return 2;
  }
  mooncake_client_t* c = NULL;
  CHECK(mooncake_client_connect(argv[1], NULL, &c) == MOONCAKE_OK, "connect");
  char key[256], keys_text[4][256];
  snprintf(key, sizeof key, "%s/one", argv[2]);
  const char value[] = "a value from C";
  CHECK(mooncake_put(c, key, value, sizeof value, NULL) == MOONCAKE_OK, "put");
  CHECK(mooncake_put(c, key, value, sizeof value, NULL) == MOONCAKE_ALREADY_EXISTS, "put twice");
  char out[64];
  size_t n = 0;
  CHECK(mooncake_get_into(c, key, out, sizeof out, &n) == MOONCAKE_OK, "get_into");
  CHECK(n == sizeof value && memcmp(out, value, n) == 0, "get_into bytes");
  uint64_t size = 0;
  CHECK(mooncake_get_size(c, key, &size) == MOONCAKE_OK && size == sizeof value, "get_size");
  int exists = -1;
  CHECK(mooncake_exists(c, "no such key", &exists) == MOONCAKE_OK && exists == 0, "exists");
  CHECK(mooncake_get_into(c, "no such key", out, sizeof out, &n) == MOONCAKE_NOT_FOUND,
        "get of a missing key");
  CHECK(strcmp(mooncake_status_name(MOONCAKE_NOT_FOUND), "NotFound") == 0, "status name");
  const char* keys[4];
  const void* data[4];
  size_t sizes[4], capacities[4], got[4];
  void* buffers[4];
  char bufs[4][64];
  mooncake_status_t results[4];
  for (int i = 0; i < 4; ++i) {
    snprintf(keys_text[i], sizeof keys_text[i], "%s/batch%d", argv[2], i);
    keys[i] = keys_text[i];
    data[i] = keys_text[i];
    sizes[i] = strlen(keys_text[i]) + 1;
    buffers[i] = bufs[i];
    capacities[i] = sizeof bufs[i];
  }
  CHECK(mooncake_batch_put(c, 4, keys, data, sizes, NULL, results) == MOONCAKE_OK, "batch_put");
  CHECK(mooncake_batch_get_into(c, 4, keys, buffers, capacities, got, results) == MOONCAKE_OK,
        "batch_get_into");
  int all[4];
  CHECK(mooncake_batch_exists(c, 4, keys, all) == MOONCAKE_OK, "batch_exists");
  for (int i = 0; i < 4; ++i) {
    CHECK(got[i] == sizes[i] && strcmp(bufs[i], keys_text[i]) == 0 && all[i] == 1, "batch bytes");
  }
  /* Batch remove of keys never read (a read leases an object: Busy until the lease ends): every
     key gone, a second remove finds none. */
  for (int i = 0; i < 4; ++i) {
    snprintf(keys_text[i], sizeof keys_text[i], "%s/gone%d", argv[2], i);
    sizes[i] = strlen(keys_text[i]) + 1;
  }
  CHECK(mooncake_batch_put(c, 4, keys, data, sizes, NULL, results) == MOONCAKE_OK, "batch_put 2");
  CHECK(mooncake_batch_remove(c, 4, keys, results) == MOONCAKE_OK, "batch_remove");
  CHECK(mooncake_batch_exists(c, 4, keys, all) == MOONCAKE_OK, "batch_exists after remove");
  for (int i = 0; i < 4; ++i) CHECK(results[i] == MOONCAKE_OK && all[i] == 0, "batch removed");
  CHECK(mooncake_batch_remove(c, 4, keys, results) == MOONCAKE_NOT_FOUND &&
            results[3] == MOONCAKE_NOT_FOUND,
        "batch_remove of removed keys");
  /* A put that names the store ranks to try first (Mooncake's preferred_segments). */
  const int preferred[1] = {1};
  mooncake_put_options_t placed = {0};
  placed.preferred_ranks = preferred;
  placed.preferred_rank_count = 1;
  snprintf(key, sizeof key, "%s/preferred", argv[2]);
  CHECK(mooncake_put(c, key, value, sizeof value, &placed) == MOONCAKE_OK, "put preferred_ranks");
  CHECK(mooncake_get_into(c, key, out, sizeof out, &n) == MOONCAKE_OK && n == sizeof value,
        "get of a preferred_ranks put");
  /* The store's key limit, 1..4096 bytes: the empty key and a 4097-byte key are refused by
     every call with MOONCAKE_INVALID_ARGUMENT and a message naming the limit; 4096 bytes work. */
  static char long_key[4098];
  memset(long_key, 'k', 4097);
  const char* bad_keys[2] = {"", long_key};
  for (int b = 0; b < 2; ++b) {
    const char* bad = bad_keys[b];
    const char* names = b == 0 ? "empty key" : "limit of 4096 bytes";
    int refused = 0;
    refused += mooncake_put(c, bad, value, sizeof value, NULL) == MOONCAKE_INVALID_ARGUMENT &&
               strstr(mooncake_last_error(), names) != NULL;
    refused += mooncake_get_into(c, bad, out, sizeof out, &n) == MOONCAKE_INVALID_ARGUMENT &&
               strstr(mooncake_last_error(), names) != NULL;
    refused += mooncake_get_size(c, bad, &size) == MOONCAKE_INVALID_ARGUMENT &&
               strstr(mooncake_last_error(), names) != NULL;
    refused += mooncake_exists(c, bad, &exists) == MOONCAKE_INVALID_ARGUMENT &&
               strstr(mooncake_last_error(), names) != NULL;
    refused += mooncake_remove(c, bad) == MOONCAKE_INVALID_ARGUMENT &&
               strstr(mooncake_last_error(), names) != NULL;
    const char* one[1] = {bad};
    const void* one_data[1] = {value};
    size_t one_size[1] = {sizeof value};
    void* one_buffer[1] = {out};
    size_t one_capacity[1] = {sizeof out};
    refused += mooncake_batch_put(c, 1, one, one_data, one_size, NULL, results) ==
                   MOONCAKE_INVALID_ARGUMENT &&
               results[0] == MOONCAKE_INVALID_ARGUMENT;
    refused += mooncake_batch_get_into(c, 1, one, one_buffer, one_capacity, got, results) ==
                   MOONCAKE_INVALID_ARGUMENT &&
               results[0] == MOONCAKE_INVALID_ARGUMENT;
    refused += mooncake_batch_exists(c, 1, one, all) == MOONCAKE_INVALID_ARGUMENT;
    refused += mooncake_batch_remove(c, 1, one, results) == MOONCAKE_INVALID_ARGUMENT &&
               results[0] == MOONCAKE_INVALID_ARGUMENT;
    if (refused != 9) {
      fprintf(stderr, "c_client: a %zu-byte key: %d of 9 calls refused it naming '%s' (last: %s)\n",
              strlen(bad), refused, names, mooncake_last_error());
      return 1;
    }
  }
  static char longest[4097];
  memset(longest, 'x', 4096);
  memcpy(longest, argv[2], strlen(argv[2]) < 64 ? strlen(argv[2]) : 64);
  CHECK(mooncake_put(c, longest, value, sizeof value, NULL) == MOONCAKE_OK,
        "put of a 4096-byte key");
  CHECK(mooncake_get_into(c, longest, out, sizeof out, &n) == MOONCAKE_OK && n == sizeof value,
        "get of a 4096-byte key");
  mooncake_client_close(c);
  printf("c_client OK (libmooncake_client %s)\n", mooncake_client_version());
  return 0;
}

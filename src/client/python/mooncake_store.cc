// The Python module `mooncake_store` (docs/CLIENT.md): Mooncake Store's Python client,
// MooncakeDistributedStore, over our client (client/client.h). Class and method names, argument
// order and return conventions follow Mooncake's wherever they apply: 0 for success and a
// negative number (-ErrorCode, see ERRORS) for a failure, bytes for values (b"" when missing).
// setup() takes the store job's connection file instead of etcd and master addresses.
//
// Zero-copy forms (put_from, get_into and their batch forms, register_buffer) take any object
// with the buffer protocol (bytes, bytearray, memoryview, a numpy array) or, as Mooncake's, an
// integer address and a size. The GIL is released for every call that moves bytes or waits on
// the store.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/connection_file.h"

namespace py = pybind11;

namespace mooncake::client {
namespace {

// Mooncake's ReplicateConfig, with the fields our store has.
struct ReplicateConfig {
  uint32_t replica_num = 0;  // 0: the store job's store.replicas
  bool with_soft_pin = false;
  bool with_hard_pin = false;
  std::vector<int> preferred_ranks;  // store ranks tried first (Mooncake: preferred_segment)
};

PutOptions ToPutOptions(const std::optional<ReplicateConfig>& c) {
  PutOptions o;
  if (c) {
    o.replicas = c->replica_num;
    o.soft_pin = c->with_soft_pin;
    o.hard_pin = c->with_hard_pin;
    o.preferred_ranks = c->preferred_ranks;
  }
  return o;
}

int Code(const Status& s) { return -static_cast<int>(s.code()); }

// Memory a zero-copy call reads or writes: a buffer-protocol object (its view is held until
// the call returns) or an integer address with a size.
struct Region {
  std::byte* data = nullptr;
  size_t size = 0;
  std::unique_ptr<py::buffer_info> view;
  bool raw = false;  // an integer address: used only inside a registered buffer
};

Region ToRegion(const py::object& obj, std::optional<size_t> size, bool writable) {
  Region r;
  if (py::isinstance<py::int_>(obj)) {
    if (!size) throw py::value_error("an integer buffer address needs a size");
    r.data = reinterpret_cast<std::byte*>(obj.cast<uintptr_t>());
    r.size = *size;
    r.raw = true;
    return r;
  }
  r.view =
      std::make_unique<py::buffer_info>(py::reinterpret_borrow<py::buffer>(obj).request(writable));
  const py::buffer_info& v = *r.view;
  // C-contiguous, any rank: its bytes are one range.
  py::ssize_t expected = v.itemsize;
  for (py::ssize_t d = v.ndim - 1; d >= 0; --d) {
    if (v.shape[d] > 1 && v.strides[d] != expected) {
      throw py::value_error("the buffer is not C-contiguous");
    }
    expected *= v.shape[d];
  }
  r.data = static_cast<std::byte*>(v.ptr);
  r.size = static_cast<size_t>(v.size * v.itemsize);
  if (size) {
    if (*size > r.size) throw py::value_error("size is larger than the buffer");
    r.size = *size;
  }
  return r;
}

class Store {
 public:
  int setup(const std::string& connection_file, double timeout, bool verify_checksum,
            const std::string& transport_tls, double failover_timeout) {
    ClientOptions o = Options(timeout, verify_checksum, transport_tls, failover_timeout);
    // The file holds the job token: a Python warning (the client also logs a line) when group
    // or others may read it.
    const std::string warning = ReadableByOthersWarning(connection_file);
    if (!warning.empty() && PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) != 0) {
      throw py::error_already_set();  // warnings turned into errors (-W error)
    }
    Result<std::unique_ptr<Client>> c = InvalidArgument("not connected");
    {
      py::gil_scoped_release release;
      c = Client::Connect(connection_file, o);
    }
    return Attached(std::move(c));
  }

  int setup_address(const std::string& address, const std::string& token, double timeout,
                    bool verify_checksum, const std::string& transport_tls,
                    double failover_timeout) {
    ClientOptions o = Options(timeout, verify_checksum, transport_tls, failover_timeout);
    Result<std::unique_ptr<Client>> c = InvalidArgument("not connected");
    {
      py::gil_scoped_release release;
      c = Client::ConnectTo(address, token, o);
    }
    return Attached(std::move(c));
  }

  int put(const std::string& key, const py::buffer& value,
          const std::optional<ReplicateConfig>& config) {
    Region r = ToRegion(value, std::nullopt, false);
    return Run([&](Client& c) { return c.Put(key, {r.data, r.size}, ToPutOptions(config)); });
  }

  py::bytes get(const std::string& key) {
    std::shared_ptr<Client> c = client_;
    if (c == nullptr) {
      Fail(InvalidArgument("not set up"));
      return py::bytes();
    }
    Result<uint64_t> size = InvalidArgument("");
    {
      py::gil_scoped_release release;
      size = c->GetSize(key);
    }
    if (!size.ok()) {
      Fail(size.status());
      return py::bytes();
    }
    // The bytes object is filled in place: one copy, from the store into Python's memory.
    py::bytes out(nullptr, static_cast<size_t>(*size));
    char* dst = PyBytes_AsString(out.ptr());
    Result<size_t> n = InvalidArgument("");
    {
      py::gil_scoped_release release;
      n = c->GetInto(key, dst, *size);
    }
    if (!n.ok() || *n != *size) {
      Fail(n.ok() ? Internal("the object changed size while it was read") : n.status());
      return py::bytes();
    }
    return out;
  }

  // Mooncake's put_batch: one code for the whole batch, 0 only when every key was stored. On a
  // partial failure last_error() says how many keys were stored and names the first that was
  // not; batch_put gives each key's result.
  int put_batch(const std::vector<std::string>& keys, const std::vector<py::buffer>& values,
                const std::optional<ReplicateConfig>& config) {
    if (Status s = Lengths("put_batch", keys.size(), values.size(), std::nullopt); !s.ok()) {
      return Fail(s);
    }
    std::vector<Status> r = PutBuffers(keys, values, config);
    size_t failed = 0;
    const Status* first = nullptr;
    for (const Status& s : r) {
      if (s.ok()) continue;
      if (first == nullptr) first = &s;
      ++failed;
    }
    if (first == nullptr) return 0;
    const size_t at = static_cast<size_t>(first - r.data());
    return Fail(Status(first->code(), "put_batch: " + std::to_string(failed) + " of " +
                                          std::to_string(r.size()) + " keys failed, " +
                                          std::to_string(r.size() - failed) +
                                          " stored (batch_put returns each key's result); key " +
                                          std::to_string(at) + ": " + first->message()));
  }

  // Each key's result, in order: 0 or its negated error code (as batch_put_from).
  std::vector<int> batch_put(const std::vector<std::string>& keys,
                             const std::vector<py::buffer>& values,
                             const std::optional<ReplicateConfig>& config) {
    if (Status s = Lengths("batch_put", keys.size(), values.size(), std::nullopt); !s.ok()) {
      return std::vector<int>(keys.size(), Fail(s));
    }
    std::vector<int> out;
    for (const Status& s : PutBuffers(keys, values, config)) out.push_back(s.ok() ? 0 : Fail(s));
    return out;
  }

  std::vector<py::bytes> get_batch(const std::vector<std::string>& keys) {
    std::vector<Result<std::vector<std::byte>>> r;
    if (std::shared_ptr<Client> c = client_) {
      py::gil_scoped_release release;
      r = c->BatchGet(keys);
    } else {
      r.assign(keys.size(), InvalidArgument("not set up"));
    }
    std::vector<py::bytes> out;
    for (auto& v : r) {
      if (!v.ok()) {
        Fail(v.status());
        out.emplace_back();
        continue;
      }
      out.emplace_back(reinterpret_cast<const char*>(v->data()), v->size());
    }
    return out;
  }

  int put_from(const std::string& key, const py::object& buffer, std::optional<size_t> size,
               const std::optional<ReplicateConfig>& config) {
    Region r = ToRegion(buffer, size, false);
    return Run([&](Client& c) {
      MC_RETURN_IF_ERROR(CheckRaw(c, r));
      return c.PutFrom(key, r.data, r.size, ToPutOptions(config));
    });
  }

  int64_t get_into(const std::string& key, const py::object& buffer, std::optional<size_t> size) {
    Region r = ToRegion(buffer, size, true);
    std::shared_ptr<Client> c = client_;
    if (c == nullptr) return Fail(InvalidArgument("not set up"));
    Result<size_t> n = InvalidArgument("");
    {
      py::gil_scoped_release release;
      Status checked = CheckRaw(*c, r);
      n = checked.ok() ? c->GetInto(key, r.data, r.size) : Result<size_t>(checked);
    }
    if (!n.ok()) return Fail(n.status());
    return static_cast<int64_t>(*n);
  }

  std::vector<int> batch_put_from(const std::vector<std::string>& keys,
                                  const std::vector<py::object>& buffers,
                                  const std::optional<std::vector<size_t>>& sizes,
                                  const std::optional<ReplicateConfig>& config) {
    if (Status s =
            Lengths("batch_put_from", keys.size(), buffers.size(), SizeCount(sizes), "buffers");
        !s.ok()) {
      return std::vector<int>(keys.size(), Fail(s));
    }
    std::vector<Region> regions = Regions(buffers, sizes, false, keys.size());
    std::vector<std::span<const std::byte>> spans;
    for (const auto& r : regions) spans.emplace_back(r.data, r.size);
    std::vector<Status> r = Batch<Status>(
        [&](Client& c) {
          if (Status s = CheckRaw(c, regions); !s.ok()) return std::vector<Status>(keys.size(), s);
          return c.BatchPut(keys, spans, ToPutOptions(config));
        },
        keys.size());
    std::vector<int> out;
    for (const Status& s : r) out.push_back(s.ok() ? 0 : Fail(s));
    return out;
  }

  std::vector<int64_t> batch_get_into(const std::vector<std::string>& keys,
                                      const std::vector<py::object>& buffers,
                                      const std::optional<std::vector<size_t>>& sizes) {
    if (Status s =
            Lengths("batch_get_into", keys.size(), buffers.size(), SizeCount(sizes), "buffers");
        !s.ok()) {
      return std::vector<int64_t>(keys.size(), Fail(s));
    }
    std::vector<Region> regions = Regions(buffers, sizes, true, keys.size());
    std::vector<std::span<std::byte>> spans;
    for (const auto& r : regions) spans.emplace_back(r.data, r.size);
    std::vector<Result<size_t>> r = Batch<Result<size_t>>(
        [&](Client& c) {
          if (Status s = CheckRaw(c, regions); !s.ok()) {
            return std::vector<Result<size_t>>(keys.size(), s);
          }
          return c.BatchGetInto(keys, spans);
        },
        keys.size());
    std::vector<int64_t> out;
    for (const auto& n : r) out.push_back(n.ok() ? static_cast<int64_t>(*n) : Fail(n.status()));
    return out;
  }

  int register_buffer(const py::object& buffer, std::optional<size_t> size) {
    Region r = ToRegion(buffer, size, false);  // read-only memory registers too (puts)
    return Run([&](Client& c) { return c.RegisterBuffer(r.data, r.size); });
  }

  int unregister_buffer(const py::object& buffer) {
    Region r = ToRegion(
        buffer, py::isinstance<py::int_>(buffer) ? std::optional<size_t>(0) : std::nullopt, false);
    return Run([&](Client& c) { return c.UnregisterBuffer(r.data); });
  }

  int is_exist(const std::string& key) {
    std::shared_ptr<Client> c = client_;
    if (c == nullptr) {
      Fail(InvalidArgument("not set up"));
      return -1;
    }
    Status s;
    {
      py::gil_scoped_release release;
      s = c->Exists(key);
    }
    if (s.ok()) return 1;
    if (s.code() == ErrorCode::kNotFound) return 0;
    Fail(s);
    return -1;
  }

  std::vector<int> batch_is_exist(const std::vector<std::string>& keys) {
    std::shared_ptr<Client> c = client_;
    if (c == nullptr) {
      Fail(InvalidArgument("not set up"));
      return std::vector<int>(keys.size(), -1);
    }
    Result<std::vector<uint8_t>> r = InvalidArgument("");
    {
      py::gil_scoped_release release;
      r = c->BatchExists(keys);
    }
    if (!r.ok()) {
      Fail(r.status());
      return std::vector<int>(keys.size(), -1);
    }
    return std::vector<int>(r->begin(), r->end());
  }

  int remove(const std::string& key) {
    return Run([&](Client& c) { return c.Remove(key); });
  }

  int64_t get_size(const std::string& key) {
    std::shared_ptr<Client> c = client_;
    if (c == nullptr) return Fail(InvalidArgument("not set up"));
    Result<uint64_t> n = InvalidArgument("");
    {
      py::gil_scoped_release release;
      n = c->GetSize(key);
    }
    if (!n.ok()) return Fail(n.status());
    return static_cast<int64_t>(*n);
  }

  // Waits for the calls other threads have in flight (Client::Close); each call holds its own
  // reference to the client, so the last one to return frees it, never one still inside.
  int close() {
    std::shared_ptr<Client> c = client_;
    if (!c) return 0;
    Status s;
    {
      py::gil_scoped_release release;
      s = c->Close();
    }
    if (s.code() == ErrorCode::kBusy) return Fail(s);  // still attached: close again
    if (client_ == c) client_.reset();
    return s.ok() ? 0 : Fail(s);
  }

  py::dict master_info() {
    std::shared_ptr<Client> c = client_;
    if (c == nullptr) throw py::value_error("not set up: call setup(connection_file)");
    const mooncake::client::StoreInfo info = c->info();
    py::dict d;
    d["master_rank"] = info.master_rank;
    d["attached_as"] = info.attached_as;
    d["master_changes"] = info.master_changes;
    return d;
  }

  // Keys are byte strings, and a message quotes its key: bytes that are not UTF-8 come back
  // escaped (\xff), never as a UnicodeDecodeError.
  py::str last_error() const {
    PyObject* text = PyUnicode_DecodeUTF8(
        last_error_.data(), static_cast<Py_ssize_t>(last_error_.size()), "backslashreplace");
    if (text == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(text);
  }

 private:
  static ClientOptions Options(double timeout, bool verify, const std::string& tls,
                               double failover_timeout) {
    ClientOptions o;
    if (timeout > 0) {
      o.timeout = std::chrono::nanoseconds(static_cast<int64_t>(timeout * 1e9));
      o.connect_timeout = o.timeout;
    }
    o.failover_timeout =
        std::chrono::nanoseconds(static_cast<int64_t>(std::max(0.0, failover_timeout) * 1e9));
    o.verify_checksum = verify;
    o.transport_tls = tls;
    return o;
  }

  int Attached(Result<std::unique_ptr<Client>> c) {
    if (!c.ok()) return Fail(c.status());
    client_ = std::move(*c);
    return 0;
  }

  // Remembers the failure's message (last_error()) and returns its code, negated.
  int Fail(const Status& s) {
    last_error_ = s.ToString();
    return Code(s);
  }

  // Runs `f` on the client without the GIL: 0, or the failure's negated code.
  template <typename F>
  int Run(F&& f) {
    std::shared_ptr<Client> c = client_;
    if (c == nullptr) return Fail(InvalidArgument("not set up: call setup(connection_file)"));
    Status s;
    {
      py::gil_scoped_release release;
      s = f(*c);
    }
    return s.ok() ? 0 : Fail(s);
  }

  template <typename T, typename F>
  std::vector<T> Batch(F&& f, size_t n) {
    std::shared_ptr<Client> c = client_;
    if (c == nullptr) return std::vector<T>(n, T(InvalidArgument("not set up")));
    py::gil_scoped_release release;
    return f(*c);
  }

  std::vector<Status> PutBuffers(const std::vector<std::string>& keys,
                                 const std::vector<py::buffer>& values,
                                 const std::optional<ReplicateConfig>& config) {
    std::vector<Region> regions;
    std::vector<std::span<const std::byte>> spans;
    for (const auto& v : values) {
      regions.push_back(ToRegion(v, std::nullopt, false));
      spans.emplace_back(regions.back().data, regions.back().size);
    }
    return Batch<Status>([&](Client& c) { return c.BatchPut(keys, spans, ToPutOptions(config)); },
                         keys.size());
  }

  // An integer address is trusted only inside a buffer registered with register_buffer (which
  // checks that its memory is mapped): any other integer would be dereferenced blindly.
  static Status CheckRaw(Client& c, const Region& r) {
    return r.raw ? c.CheckRegistered(r.data, r.size) : Status::Ok();
  }
  static Status CheckRaw(Client& c, const std::vector<Region>& regions) {
    for (const Region& r : regions) MC_RETURN_IF_ERROR(CheckRaw(c, r));
    return Status::Ok();
  }

  // Batch calls whose lists differ in length follow Mooncake's store bindings: no exception,
  // the call's usual result with every key failed (InvalidArgument: [-1] * len(keys) from the
  // list forms, -1 from put_batch), and nothing sent; last_error() names the call and each
  // list's length (docs/CLIENT.md).
  static Status Lengths(const char* call, size_t keys, size_t values, std::optional<size_t> sizes,
                        const char* values_name = "values") {
    if (values == keys && (!sizes || *sizes == keys)) return Status::Ok();
    return InvalidArgument(std::string(call) + ": " + std::to_string(keys) + " keys but " +
                           std::to_string(values) + " " + values_name +
                           (sizes ? " and " + std::to_string(*sizes) + " sizes" : "") +
                           ": every list needs one entry per key; nothing was sent");
  }
  static std::optional<size_t> SizeCount(const std::optional<std::vector<size_t>>& sizes) {
    return sizes ? std::optional<size_t>(sizes->size()) : std::nullopt;
  }

  static std::vector<Region> Regions(const std::vector<py::object>& buffers,
                                     const std::optional<std::vector<size_t>>& sizes, bool writable,
                                     size_t n) {
    // The callers checked the lengths first (Lengths): n buffers, and n sizes if any.
    std::vector<Region> out;
    for (size_t i = 0; i < n; ++i) {
      out.push_back(ToRegion(buffers[i], sizes ? std::optional<size_t>((*sizes)[i]) : std::nullopt,
                             writable));
    }
    return out;
  }

  // Shared with every call in flight (each copies it while it holds the GIL), so close() on one
  // thread never frees the client under a call on another.
  std::shared_ptr<Client> client_;
  std::string last_error_;
};

}  // namespace
}  // namespace mooncake::client

PYBIND11_MODULE(mooncake_store, m) {
  using mooncake::client::ReplicateConfig;
  using mooncake::client::Store;
  m.doc() =
      "Mooncake Store's Python client over mooncake's store service (docs/CLIENT.md). Start a "
      "store with `mpirun -np N mooncake --job.mode store`, then "
      "MooncakeDistributedStore().setup('<run folder>/connect.json').";
  py::class_<ReplicateConfig>(m, "ReplicateConfig")
      .def(py::init<>())
      .def_readwrite("replica_num", &ReplicateConfig::replica_num)
      .def_readwrite("with_soft_pin", &ReplicateConfig::with_soft_pin)
      .def_readwrite("with_hard_pin", &ReplicateConfig::with_hard_pin)
      .def_readwrite("preferred_ranks", &ReplicateConfig::preferred_ranks);
  py::dict errors;
  for (int code : {1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 20, 21, 22, 23, 30}) {
    errors[py::int_(-code)] =
        std::string(mooncake::ErrorCodeName(static_cast<mooncake::ErrorCode>(code)));
  }
  m.attr("ERRORS") = errors;
  const py::none none;
  py::class_<Store>(m, "MooncakeDistributedStore")
      .def(py::init<>())
      .def("setup", &Store::setup, py::arg("connection_file"), py::arg("timeout") = 10.0,
           py::arg("verify_checksum") = true, py::arg("transport_tls") = "auto",
           py::arg("failover_timeout") = 30.0,
           "Attach with the store job's connection file. 0 or a negative error code. "
           "failover_timeout: seconds a call whose master stopped answering looks for the "
           "conductor that took over (0: never).")
      .def("setup_address", &Store::setup_address, py::arg("address"), py::arg("token"),
           py::arg("timeout") = 10.0, py::arg("verify_checksum") = true,
           py::arg("transport_tls") = "auto", py::arg("failover_timeout") = 30.0,
           "Attach with the master's 'host:port' and the job token (32 hex digits).")
      .def("master_info", &Store::master_info,
           "{'master_rank', 'attached_as', 'master_changes'}: the master this client uses now, "
           "its number there, and how often it moved to a conductor that took over.")
      .def("put", &Store::put, py::arg("key"), py::arg("value"), py::arg("config") = none)
      .def("get", &Store::get, py::arg("key"), "The value, or b'' when missing or on error.")
      .def("put_batch", &Store::put_batch, py::arg("keys"), py::arg("values"),
           py::arg("config") = none)
      .def("batch_put", &Store::batch_put, py::arg("keys"), py::arg("values"),
           py::arg("config") = none,
           "Each key's result, in order: 0 or a negative error code (put_batch's per-key form).")
      .def("get_batch", &Store::get_batch, py::arg("keys"))
      .def("put_from", &Store::put_from, py::arg("key"), py::arg("buffer"), py::arg("size") = none,
           py::arg("config") = none)
      .def("get_into", &Store::get_into, py::arg("key"), py::arg("buffer"), py::arg("size") = none,
           "Bytes read, or a negative error code.")
      .def("batch_put_from", &Store::batch_put_from, py::arg("keys"), py::arg("buffers"),
           py::arg("sizes") = none, py::arg("config") = none)
      .def("batch_get_into", &Store::batch_get_into, py::arg("keys"), py::arg("buffers"),
           py::arg("sizes") = none)
      .def("register_buffer", &Store::register_buffer, py::arg("buffer"), py::arg("size") = none)
      .def("unregister_buffer", &Store::unregister_buffer, py::arg("buffer"))
      .def("is_exist", &Store::is_exist, py::arg("key"), "1 exists, 0 not, -1 error.")
      .def("batch_is_exist", &Store::batch_is_exist, py::arg("keys"))
      .def("remove", &Store::remove, py::arg("key"))
      .def("get_size", &Store::get_size, py::arg("key"),
           "The size in bytes, or a negative error code.")
      .def("close", &Store::close)
      .def("last_error", &Store::last_error,
           "The message of this store object's last failed call.");
}

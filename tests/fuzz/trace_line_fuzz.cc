// Fuzzes the trace line reader (trace/trace_reader.h ParseTraceLine): every line of a trace
// file. A line that parses must format back (FormatTraceLine) to a line that parses to the same
// request.
#include <string_view>

#include "fuzz_check.h"
#include "trace/trace_reader.h"

using namespace mooncake;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto r = trace::ParseTraceLine(text, "fuzz", 1);
  if (!r.ok()) return 0;
  MC_FUZZ_CHECK(r->timestamp_ms >= 0 && r->input_length >= 0 && r->output_length >= 0,
                "negative field accepted");
  auto back = trace::ParseTraceLine(trace::FormatTraceLine(*r), "fuzz", 1);
  MC_FUZZ_CHECK(back.ok(), "formatted line does not parse");
  MC_FUZZ_CHECK(back->timestamp_ms == r->timestamp_ms && back->input_length == r->input_length &&
                    back->output_length == r->output_length &&
                    back->hash_ids.size() == r->hash_ids.size(),
                "trace line round trip");
  for (size_t i = 0; i < r->hash_ids.size(); ++i) {
    MC_FUZZ_CHECK(back->hash_ids[i].value == r->hash_ids[i].value, "hash id round trip");
  }
  return 0;
}

// Internal to src/app/eval: sweep.csv rows and one-line point summaries.
#pragma once

#include <string>
#include <vector>

#include "eval/eval_options.h"
#include "eval/sweep.h"
#include "sim/simulator.h"

namespace mooncake::eval {

std::string PointLabel(const SweepPoint& p);  // "conductor.policy=random slo.tbt=100ms"
std::string OneLineSummary(const trace::Summary& s, double wall_s);
std::string SweepCsvHeader(const std::vector<SweepAxis>& axes);
// One line, starting with the point index, ending with '\n'.
std::string SweepCsvRow(size_t index, const SweepPoint& point, const EvalOptions& o,
                        const sim::SimResult& r, double wall_s);
// Concatenates gathered rows ordered by their leading point index.
std::string SortRows(const std::vector<std::string>& gathered);

}  // namespace mooncake::eval

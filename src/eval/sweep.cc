#include "eval/sweep.h"

#include <sstream>

namespace mooncake::eval {

Result<SweepAxis> ParseSweepSpec(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    return InvalidArgument("sweep = '" + spec + "': expected key=v1,v2,...");
  }
  SweepAxis axis;
  axis.key = spec.substr(0, eq);
  std::stringstream ss(spec.substr(eq + 1));
  for (std::string v; std::getline(ss, v, ',');) {
    if (v.empty()) return InvalidArgument("sweep = '" + spec + "': empty value");
    axis.values.push_back(v);
  }
  return axis;
}

std::vector<SweepPoint> CartesianPoints(const std::vector<SweepAxis>& axes) {
  std::vector<SweepPoint> points = {{}};
  for (const SweepAxis& axis : axes) {
    std::vector<SweepPoint> next;
    next.reserve(points.size() * axis.values.size());
    for (const SweepPoint& p : points) {
      for (const std::string& v : axis.values) {
        SweepPoint q = p;
        q.emplace_back(axis.key, v);
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

std::vector<size_t> PointsForRank(size_t points, int rank, int size) {
  std::vector<size_t> mine;
  if (size < 1 || rank < 0 || rank >= size) return mine;
  for (size_t i = static_cast<size_t>(rank); i < points; i += static_cast<size_t>(size)) {
    mine.push_back(i);
  }
  return mine;
}

SweepComm SerialSweepComm() {
  SweepComm c;
  c.gather = [](const std::string& text) { return std::vector<std::string>{text}; };
  return c;
}

}  // namespace mooncake::eval

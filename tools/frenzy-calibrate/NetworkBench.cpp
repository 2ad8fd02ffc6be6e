//===- NetworkBench.cpp - point-to-point and all-reduce between nodes -----===//
//
// The rank side of frenzy-calibrate --cluster (NetworkBench.h). Messages are
// plain MPI_Send / MPI_Recv of bytes and MPI_Allreduce of floats, as the
// runtime moves a stage's activations (its private copy is priced apart, by
// the device profile's copy rate) and sums DP gradients (MpiComm).
//
//===----------------------------------------------------------------------===//
#include "NetworkBench.h"

#include "MpiComm.h"
#include "Tensor.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

namespace frenzy::calibrate {

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

/// Rounds for a message: fewer for large ones (a 16 MiB message is 0.13 s
/// on a 1 Gb/s link), never fewer than 3.
int roundsFor(int64_t bytes, int rounds) {
  return bytes >= (int64_t(4) << 20) ? std::max(3, rounds / 2) : rounds;
}

/// Seconds of an all-reduce of `bytes` of floats on `comm`: per round, the
/// slowest member's time from a common start (a barrier) to its return.
double allReduce(MPI_Comm comm, int64_t bytes, int rounds) {
  int64_t floats = std::max<int64_t>(1, bytes / 4);
  std::vector<float> buf(size_t(floats), 1.0f);
  MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(floats), MPI_FLOAT, MPI_SUM,
                comm);
  std::vector<double> t;
  for (int k = 0; k < roundsFor(bytes, rounds); ++k) {
    MPI_Barrier(comm);
    double t0 = now();
    MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(floats), MPI_FLOAT, MPI_SUM,
                  comm);
    double mine = now() - t0, slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    t.push_back(slowest);
  }
  return median(t);
}

std::string pointsText(const std::vector<int64_t> &sizes,
                       const std::vector<double> &seconds) {
  std::ostringstream s;
  s.precision(9);
  for (size_t i = 0; i < sizes.size(); ++i)
    s << " " << sizes[i] << ":" << seconds[i];
  return s.str();
}

} // namespace

double pingPongSeconds(int me, int a, int b, int64_t bytes, int rounds) {
  std::vector<char> buf(size_t(std::max<int64_t>(bytes, 1)), 1);
  int other = me == a ? b : a;
  auto once = [&] {
    if (me == a) {
      MPI_Send(buf.data(), int(bytes), MPI_BYTE, other, 1, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), int(bytes), MPI_BYTE, other, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), int(bytes), MPI_BYTE, other, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), int(bytes), MPI_BYTE, other, 1, MPI_COMM_WORLD);
    }
  };
  once();
  std::vector<double> t;
  for (int k = 0; k < rounds; ++k) {
    double t0 = now();
    once();
    t.push_back((now() - t0) / 2);
  }
  return median(t);
}


Fit fitLine(std::vector<std::pair<double, double>> points, double factor) {
  Fit f;
  std::sort(points.begin(), points.end());
  f.points = points;
  if (points.empty())
    return f;
  f.latency = points.front().second;
  // The sustained rate: the least-squares slope over the sizes of at least
  // a quarter of the largest (a shaper's bucket or TCP's window growth
  // make smaller messages faster or slower per byte; their own times are
  // kept for them); the two largest at least.
  double largest = points.back().first;
  size_t from = points.size();
  while (from > 0 && points[from - 1].first * 4 >= largest)
    --from;
  from = std::min(from, points.size() >= 2 ? points.size() - 2 : 0);
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = from; i < points.size(); ++i) {
    double x = factor * points[i].first, y = points[i].second;
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  double det = n * sxx - sx * sx;
  double slope = det > 0 ? (n * sxy - sx * sy) / det : 0;
  if (slope > 0)
    f.bandwidth = 1 / slope;
  else if (points.back().second > 0)
    f.bandwidth = factor * largest / points.back().second;
  return f;
}

std::vector<int64_t> parseSizes(const std::string &list) {
  std::vector<int64_t> out;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) {
    char *end = nullptr;
    double v = std::strtod(item.c_str(), &end);
    std::string unit = end ? std::string(end) : "";
    double scale = unit.empty()                 ? 1
                   : unit == "K" || unit == "k" ? 1024
                   : unit == "M" || unit == "m" ? 1024 * 1024
                                                : -1;
    if (item.empty() || end == item.c_str() || scale < 0 || v * scale < 4 ||
        v * scale > double(1 << 30))
      throw rt::RuntimeError("--sizes: '" + item +
                             "' is not a message size from 4 bytes to 1G "
                             "(e.g. --sizes=8,64K,1M,4M)");
    out.push_back(int64_t(v * scale));
  }
  if (out.size() < 2)
    throw rt::RuntimeError("--sizes: give at least two message sizes (a "
                           "latency and a bandwidth), e.g. --sizes=8,1M");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int measureNetworkRank(const NetworkSettings &s) {
  rt::MpiComm comm(nullptr, nullptr);
  int me = comm.rank(), n = comm.size();
  std::vector<std::string> lines;
  // Every node pair, one at a time: the others wait at the barrier.
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      MPI_Barrier(MPI_COMM_WORLD);
      std::vector<double> t(s.sizes.size(), 0.0);
      if (me == a || me == b)
        for (size_t i = 0; i < s.sizes.size(); ++i)
          t[i] = pingPongSeconds(me, a, b, s.sizes[i],
                                 roundsFor(s.sizes[i], s.rounds));
      // Rank a's figures to rank 0 (a sum: every other rank adds zeros).
      std::vector<double> got(t.size(), 0.0);
      if (me != a)
        std::fill(t.begin(), t.end(), 0.0);
      MPI_Reduce(t.data(), got.data(), int(t.size()), MPI_DOUBLE, MPI_SUM, 0,
                 MPI_COMM_WORLD);
      lines.push_back("pair " + std::to_string(a) + " " + std::to_string(b) +
                      pointsText(s.sizes, got));
    }
  // All-reduces: across every node, then across each pair of three or more.
  std::vector<std::vector<int>> groups;
  std::vector<int> all(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    all[size_t(i)] = i;
  groups.push_back(all);
  if (n > 2)
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b)
        groups.push_back({a, b});
  for (const std::vector<int> &g : groups) {
    MPI_Barrier(MPI_COMM_WORLD);
    bool in = std::find(g.begin(), g.end(), me) != g.end();
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, me, &sub);
    std::vector<double> t(s.sizes.size(), 0.0);
    if (in) {
      for (size_t i = 0; i < s.sizes.size(); ++i)
        t[i] = allReduce(sub, s.sizes[i], s.rounds);
      MPI_Comm_free(&sub);
    }
    std::vector<double> got(t.size(), 0.0);
    if (me != g.front())
      std::fill(t.begin(), t.end(), 0.0);
    MPI_Reduce(t.data(), got.data(), int(t.size()), MPI_DOUBLE, MPI_SUM, 0,
               MPI_COMM_WORLD);
    std::string members;
    for (int r : g)
      members += (members.empty() ? "" : ",") + std::to_string(r);
    lines.push_back("allreduce " + members + pointsText(s.sizes, got));
  }
  if (me == 0) {
    for (const std::string &l : lines)
      std::printf("%s %s\n", kNetworkLine, l.c_str());
    std::fflush(stdout);
  }
  return 0;
}

} // namespace frenzy::calibrate

//===- PhillyTrace.cpp - read the Philly-derived CSV of Sia's artifact ----===//
//
// Columns (shared/traces/README.md): timestamp "YYYY-MM-DD HH:MM:SS",
// duration (s), num_gpus, gpu_time (s), cluster. Rows are unsorted; the
// reader sorts by submission time, takes a window, and maps each job to a
// model by GPU-hours (TraceModels.cpp). Every row is checked, also outside
// the window, so a damaged file is reported rather than half-read.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Scheduler/Traces.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

using namespace frenzy;
using namespace frenzy::sched;

/// Seconds since 1970-01-01 of a proleptic Gregorian date-time (UTC), or
/// -1 when malformed. Civil-from-days arithmetic, no time zone database.
static int64_t parseTimestamp(llvm::StringRef s) {
  int64_t y, mo, d, h, mi, se;
  if (s.size() != 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' ||
      s[13] != ':' || s[16] != ':' || s.substr(0, 4).getAsInteger(10, y) ||
      s.substr(5, 2).getAsInteger(10, mo) ||
      s.substr(8, 2).getAsInteger(10, d) ||
      s.substr(11, 2).getAsInteger(10, h) ||
      s.substr(14, 2).getAsInteger(10, mi) ||
      s.substr(17, 2).getAsInteger(10, se) || mo < 1 || mo > 12 || d < 1 ||
      d > 31 || h > 23 || mi > 59 || se > 60)
    return -1;
  y -= mo <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  int64_t days = era * 146097 + doe - 719468;
  return days * 86400 + h * 3600 + mi * 60 + se;
}

llvm::Expected<std::vector<JobSpec>>
frenzy::sched::readPhillyTrace(llvm::StringRef path, const PhillyOptions &o) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf)
    return llvm::createStringError(buf.getError(), "%s: cannot read: %s",
                                   path.str().c_str(),
                                   buf.getError().message().c_str());
  int64_t start = 0;
  if (!o.start.empty() && (start = parseTimestamp(o.start)) < 0)
    return llvm::createStringError(
        std::errc::invalid_argument,
        "--philly-start '%s': expected \"YYYY-MM-DD HH:MM:SS\"",
        o.start.c_str());
  struct Row {
    int64_t submit;
    double duration;
    int64_t gpus;
    double gpuTime;
    size_t line;
  };
  std::vector<Row> rows;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n');
  for (size_t ln = 0; ln < lines.size(); ++ln) {
    llvm::StringRef line = lines[ln].trim();
    if (line.empty())
      continue;
    auto fail = [&](const char *field, const llvm::Twine &what) {
      return llvm::createStringError(std::errc::invalid_argument,
                                     "%s:%zu: field '%s': %s",
                                     path.str().c_str(), ln + 1, field,
                                     what.str().c_str());
    };
    llvm::SmallVector<llvm::StringRef> f;
    line.split(f, ',');
    if (ln == 0) {
      if (f.size() < 4 || f[0] != "timestamp" || f[1] != "duration" ||
          f[2] != "num_gpus" || f[3] != "gpu_time")
        return fail("header", "expected 'timestamp,duration,num_gpus,"
                              "gpu_time,cluster', got '" + line + "'");
      continue;
    }
    if (f.size() != 5)
      return fail("row", "expected 5 comma-separated fields, got " +
                             llvm::Twine(f.size()));
    Row r{parseTimestamp(f[0]), 0, 0, 0, ln + 1};
    if (r.submit < 0)
      return fail("timestamp", "expected \"YYYY-MM-DD HH:MM:SS\", got '" +
                                   f[0] + "'");
    if (f[1].getAsDouble(r.duration) || !(r.duration >= 0))
      return fail("duration", "expected seconds >= 0, got '" + f[1] + "'");
    if (f[2].getAsInteger(10, r.gpus) || r.gpus <= 0)
      return fail("num_gpus", "expected a positive integer, got '" + f[2] +
                                  "'");
    if (f[3].getAsDouble(r.gpuTime) || !(r.gpuTime >= 0))
      return fail("gpu_time", "expected seconds >= 0, got '" + f[3] + "'");
    rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
    return a.submit < b.submit;
  });
  auto first = std::lower_bound(
      rows.begin(), rows.end(), start,
      [](const Row &r, int64_t t) { return r.submit < t; });
  if (first == rows.end())
    return llvm::createStringError(std::errc::invalid_argument,
                                   "%s: no job submitted at or after '%s'",
                                   path.str().c_str(), o.start.c_str());
  std::vector<JobSpec> jobs;
  int64_t t0 = first->submit;
  for (auto it = first; it != rows.end() && jobs.size() < o.maxJobs; ++it) {
    if (it->duration <= 0)
      continue; // jobs that never ran (failed at submission)
    double hours = it->gpuTime / 3600;
    const ModelClass *mc = &traceModelClasses().back();
    for (const ModelClass &c : traceModelClasses())
      if (hours <= c.maxGpuHours) {
        mc = &c;
        break;
      }
    JobSpec j;
    j.name = "philly-" + std::to_string(it->line);
    j.model = mc->model;
    j.globalBatch = mc->globalBatch;
    j.seq = mc->seq;
    j.arrival = double(it->submit - t0) * o.arrivalScale;
    j.referenceSeconds = std::min(it->duration, o.maxJobHours * 3600);
    j.userGpus = it->gpus;
    j.where = (path + ":" + llvm::Twine(it->line)).str();
    jobs.push_back(std::move(j));
  }
  return jobs;
}

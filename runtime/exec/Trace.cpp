//===- Trace.cpp - record a rank's measured timeline ----------------------===//
#include "Trace.h"

#include "Tensor.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <ctime>

namespace frenzy::rt {

void Trace::slice(int tid, std::string name, const char *cat, double startUs,
                  std::vector<std::pair<std::string, double>> args) {
  sliceBetween(tid, std::move(name), cat, startUs, now());
  events.back().args = std::move(args);
}

void Trace::sliceBetween(int tid, std::string name, const char *cat,
                         double startUs, double endUs) {
  plan::TraceEvent e;
  e.pid = pid;
  e.tid = tid;
  e.name = std::move(name);
  e.cat = cat;
  e.startUs = startUs + offsetUs;
  e.durUs = std::max(0.0, endUs - startUs);
  events.push_back(std::move(e));
}

double Trace::cpuNow() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) * 1e-3;
}

std::vector<std::pair<std::string, double>> Trace::takeClassArgs() {
  std::vector<std::pair<std::string, double>> args;
  for (int c = 0; c < plan::kNumOpClasses; ++c) {
    if (classes[c] > 0)
      args.emplace_back(std::string(plan::opClassName(c)) + "_us",
                        classes[c] * 1e6);
    classes[c] = 0;
  }
  return args;
}

std::string Trace::serialize(const std::string &processName) const {
  std::ostringstream os;
  plan::writeRankNames(os, pid, processName);
  for (const plan::TraceEvent &e : events) {
    os << ",\n";
    plan::writeTraceEvent(os, e);
  }
  return os.str();
}

std::string traceFileProblem(const std::string &path,
                             const std::vector<std::string> &owned) {
  struct stat target;
  bool exists = ::stat(path.c_str(), &target) == 0;
  for (const std::string &o : owned) {
    struct stat st;
    if (exists && !o.empty() && ::stat(o.c_str(), &st) == 0 &&
        st.st_dev == target.st_dev && st.st_ino == target.st_ino)
      return "it is " + o + ", an input of this run; name a new file";
  }
  if (exists && S_ISDIR(target.st_mode))
    return "it is a directory; name a file";
  std::ofstream probe(path, std::ios::app);
  if (!probe)
    return std::string("cannot open it for writing (") + std::strerror(errno) +
           ")";
  return "";
}

void writeTraceFile(const std::string &path, int ranks, int steps,
                    const std::vector<std::string> &rankEvents) {
  std::ofstream out(path, std::ios::trunc);
  plan::writeTraceHead(out, "measured", ranks, steps);
  for (size_t r = 0; r < rankEvents.size(); ++r)
    out << (r ? ",\n" : "") << rankEvents[r];
  plan::writeTraceTail(out);
  if (!out)
    throw RuntimeError(path + ": cannot write the trace");
}

} // namespace frenzy::rt

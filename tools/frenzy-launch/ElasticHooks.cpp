//===- ElasticHooks.cpp - what a supervisor sees of the ranks -------------===//
#include "ElasticHooks.h"

#include "Comm.h"
#include "Tensor.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sys/stat.h>
#include <unistd.h>

namespace frenzy::rt {

RankStatus::RankStatus(std::string d, int r)
    : dir(std::move(d)), rank(r),
      exceptionsAtStart(std::uncaught_exceptions()) {
  if (dir.empty())
    return;
  ::mkdir(dir.c_str(), 0755);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw RuntimeError(dir + ": cannot create the --status-dir");
}

RankStatus::~RankStatus() {
  // Unwinding towards the rank's error line and MPI_Abort: the supervisor
  // must see `failed` before this pid vanishes.
  if (std::uncaught_exceptions() > exceptionsAtStart)
    update(lastStep, "failed");
}

void RankStatus::update(int64_t step, const char *state) {
  lastStep = step;
  if (dir.empty())
    return;
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  std::string path = dir + "/rank-" + std::to_string(rank);
  std::string tmp = path + ".tmp";
  // Written whole to a temporary name and renamed: a reader never sees a
  // half-written line. A failure here is not worth ending the job for: the
  // supervisor then only loses this rank's progress report.
  FILE *f = std::fopen(tmp.c_str(), "w");
  if (!f)
    return;
  std::fprintf(f, "rank %d pid %d host %s step %" PRId64 " state %s\n", rank,
               int(::getpid()), host, step, state);
  if (std::fclose(f) == 0)
    std::rename(tmp.c_str(), path.c_str());
}

bool stopFileExists(const std::string &path) {
  struct stat st;
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

void holdForTest(int64_t step, Comm *comm) {
  static const char *dir = std::getenv("FRENZY_TEST_HOLD_DIR");
  if (!dir || !*dir)
    return;
  std::string path = std::string(dir) + "/step-" + std::to_string(step);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return;
  if (comm)
    comm->giveUpCore();
  // Polled, not timed: the harness decides when by removing the file.
  while (::stat(path.c_str(), &st) == 0)
    ::usleep(1000);
  if (comm)
    comm->takeBackCore();
}

void printStopped(int64_t step, const std::string &path) {
  std::printf("stopped after the checkpoint of step %" PRId64
              " (stop file %s)\n",
              step, path.c_str());
  std::fflush(stdout);
}

} // namespace frenzy::rt

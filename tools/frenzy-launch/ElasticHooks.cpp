//===- ElasticHooks.cpp - what a supervisor sees of the ranks -------------===//
#include "ElasticHooks.h"

#include "Comm.h"
#include "Tensor.h"

#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace frenzy::rt {

namespace {
// What the SIGTERM handler writes: prepared by each update (a handler may
// only call async-signal-safe functions: open, write, close, rename).
char endedLine[512], endedTmp[4096], endedPath[4096];
size_t endedLength = 0;

void onTerminate(int sig) {
  if (endedLength > 0) {
    int fd = ::open(endedTmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      bool ok = ::write(fd, endedLine, endedLength) == ssize_t(endedLength);
      if (::close(fd) == 0 && ok)
        ::rename(endedTmp, endedPath);
    }
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}
} // namespace

RankStatus::RankStatus(std::string d, int r)
    : dir(std::move(d)), rank(r),
      exceptionsAtStart(std::uncaught_exceptions()) {
  if (dir.empty())
    return;
  ::mkdir(dir.c_str(), 0755);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw RuntimeError(dir + ": cannot create the --status-dir");
  // A rank ended by its launcher or supervisor (SIGTERM: mpirun ending a job
  // after another rank died, frenzy-elastic stopping it) says `ended`; one
  // that vanished without a word (SIGKILL, its node gone) still says
  // `running`: that is how a supervisor tells the lost ranks from the ones
  // ended because of them.
  std::snprintf(endedPath, sizeof endedPath, "%s/rank-%d", dir.c_str(), rank);
  std::snprintf(endedTmp, sizeof endedTmp, "%s/rank-%d.term", dir.c_str(),
                rank);
  ::signal(SIGTERM, onTerminate);
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
  int n = std::snprintf(endedLine, sizeof endedLine,
                        "rank %d pid %d host %s step %" PRId64 " state ended\n",
                        rank, int(::getpid()), host, step);
  endedLength = n > 0 && size_t(n) < sizeof endedLine ? size_t(n) : 0;
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

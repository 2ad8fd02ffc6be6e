//===- SharedBench.cpp - all-reduce among ranks that share cores ----------===//
//
// The model (DeviceProfile::sharedAllReduceSeconds): a member's turns on
// its core for an all-reduce of B bytes among n ranks cost
//   rounds(n) * s + 2 (n-1)/n * B / W,
// and the k members bound to one core take theirs one after another, so
// the all-reduce lasts k times that. s (the cost of a round: the processes
// of a core switch in turn) comes from 16 bytes, W from 1 MiB; each is the
// mean over the 2x- and 3x-cores runs.
//
//===----------------------------------------------------------------------===//
#include "SharedBench.h"

#include "MpiComm.h"

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace frenzy::calibrate {

static int rounds(int n) { // as DeviceProfile.cpp's allReduceRounds
  int pow2 = 1, r = 0;
  while (pow2 * 2 <= n) {
    pow2 *= 2;
    ++r;
  }
  return n <= 1 ? 0 : r + (pow2 == n ? 0 : 2);
}

int measureSharedRun(const std::string &path, bool quick) {
  rt::MpiComm comm(nullptr, nullptr);
  int me = comm.rank(), n = comm.size();
  std::vector<char> sweep(8 << 20, 1);
  auto time = [&](size_t floats) {
    std::vector<float> buf(floats, 1.0f);
    std::vector<double> t;
    int reps = quick ? 5 : 31;
    for (int k = 0; k < reps; ++k) {
      // Out of cache, as between a step's kernels; every rank sweeps before
      // the barrier, so no rank computes while the all-reduce runs.
      for (size_t j = 0; j < sweep.size(); j += 64)
        ++sweep[j];
      comm.barrier();
      double times[2] = {-MPI_Wtime(), 0};
      MPI_Allreduce(MPI_IN_PLACE, buf.data(), int(floats), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
      times[1] = MPI_Wtime();
      // From the last member's arrival (the smallest -start) to the last
      // one's return.
      double lastIn = 0, lastOut = 0;
      double negStart = times[0];
      MPI_Allreduce(&negStart, &lastIn, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
      MPI_Allreduce(&times[1], &lastOut, 1, MPI_DOUBLE, MPI_MAX,
                    MPI_COMM_WORLD);
      t.push_back(lastOut + lastIn); // lastOut - (latest start)
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  double small = time(4), large = time(size_t(1) << 18);
  if (me == 0) {
    std::ofstream out(path);
    out << n << " " << small << " " << large << "\n";
  }
  return 0;
}

bool runMpirun(std::vector<std::string> args) {
  args.insert(args.begin(), "mpirun");
  if (geteuid() == 0)
    args.insert(args.begin() + 1, "--allow-run-as-root");
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char *> argv;
    for (std::string &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp("mpirun", argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid)
    return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// Runs `exe --shared-only=FILE` under mpirun as frenzy-launch starts more
/// ranks than cores; false when it fails.
static bool runOnce(const std::string &exe, int ranks, bool quick,
                    double &small, double &large) {
  char tmpl[] = "/tmp/frenzy-calibrate-shared-XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0)
    return false;
  close(fd);
  std::vector<std::string> args = {
      "-np", std::to_string(ranks), "--oversubscribe", "--map-by", "core",
      "--bind-to", "core:overload-allowed", "--mca", "mpi_yield_when_idle",
      "1", exe, std::string("--shared-only=") + tmpl};
  if (quick)
    args.push_back("--quick");
  bool ran = runMpirun(args);
  int n = 0;
  std::ifstream in(tmpl);
  bool ok = ran && (in >> n >> small >> large) && n == ranks && small > 0 &&
            large > small;
  unlink(tmpl);
  return ok;
}

SharedAllReduce measureShared(const std::string &exe, int cores, bool quick) {
  SharedAllReduce s;
  if (cores < 2)
    return s;
  double sumRound = 0, sumBw = 0;
  std::ostringstream what;
  int fits = 0;
  for (int perCore : {2, 3}) {
    int n = perCore * cores;
    double small = 0, large = 0;
    if (!runOnce(exe, n, quick, small, large))
      return SharedAllReduce();
    double round = small / perCore / rounds(n);
    double bytes = 4.0 * (1 << 18);
    double move = large / perCore - rounds(n) * round;
    if (move <= 0)
      return SharedAllReduce();
    sumRound += round;
    sumBw += 2.0 * (n - 1) / n * bytes / move;
    ++fits;
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%s%d ranks: 16 B %.1f us, 1 MiB %.1f us",
                  fits > 1 ? "; " : "", n, small * 1e6, large * 1e6);
    what << buf;
  }
  s.roundSeconds = sumRound / fits;
  s.bandwidth = sumBw / fits;
  s.what = what.str();
  return s;
}

} // namespace frenzy::calibrate

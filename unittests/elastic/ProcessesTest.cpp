//===- ProcessesTest.cpp - frenzy-elastic's children and timeouts ---------===//
#include "Processes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <sys/wait.h>
#include <thread>

using namespace frenzy::elastic;

namespace {

/// The pid a shell child wrote into `file` (0 while not yet written).
pid_t pidIn(const std::string &file) {
  std::ifstream in(file);
  pid_t p = 0;
  in >> p;
  return p;
}

std::string tempFile(const char *name) {
  return ::testing::TempDir() + "/frenzy-elastic-" + name + "-" +
         std::to_string(::getpid());
}

TEST(Processes, RunsToTheEndAndKeepsOutput) {
  RunResult r =
      runWithTimeout({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10);
  EXPECT_FALSE(r.timedOut);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Processes, TimeoutEndsTheWholeTree) {
  // A child that starts a grandchild and waits: both must be gone after
  // the time limit, not only the child.
  std::string file = tempFile("grandchild");
  std::remove(file.c_str());
  RunResult r = runWithTimeout(
      {"sh", "-c", "sleep 100 & echo $! > " + file + "; wait"}, 0.5);
  EXPECT_TRUE(r.timedOut);
  EXPECT_EQ(r.status, -1);
  EXPECT_LT(r.seconds, 5);
  pid_t grandchild = pidIn(file);
  ASSERT_GT(grandchild, 0);
  EXPECT_FALSE(processAlive(grandchild));
  std::remove(file.c_str());
}

TEST(Processes, StopEndsAStoppedTree) {
  // A job whose processes are stopped (SIGSTOP) or ignore SIGTERM cannot
  // act on it: stop() must still end them within its grace period. SIGHUP
  // is ignored too: the kernel sends it (and SIGCONT) to the stopped
  // members of a group orphaned when `sh` dies, which would end the
  // grandchild without stop()'s SIGKILL.
  std::string file = tempFile("stopped");
  std::remove(file.c_str());
  Child c({"sh", "-c",
           "trap '' TERM HUP; sleep 100 & echo $! > " + file + "; wait"});
  pid_t grandchild = 0;
  for (int i = 0; i < 500 && !(grandchild = pidIn(file)); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_GT(grandchild, 0);
  ::kill(grandchild, SIGSTOP);
  ::kill(c.pid(), SIGSTOP);
  auto t0 = std::chrono::steady_clock::now();
  c.stop(0.3);
  double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  int status;
  EXPECT_TRUE(c.exited(&status));
  EXPECT_FALSE(processAlive(grandchild));
  EXPECT_LT(took, 5);
  ::kill(grandchild, SIGKILL); // a failed check leaves no sleeper behind
  std::remove(file.c_str());
}

TEST(Processes, ReadsLinesFromBothStreams) {
  Child c({"sh", "-c", "echo a; echo b >&2; printf c"});
  std::vector<std::pair<bool, std::string>> all;
  for (int i = 0; i < 200 && all.size() < 3; ++i)
    for (auto &l : c.readLines(20))
      all.push_back(l);
  // Order is kept within a stream (the two are separate pipes).
  std::vector<std::pair<bool, std::string>> want = {
      {false, "a"}, {false, "c"}, {true, "b"}};
  std::stable_sort(all.begin(), all.end(),
                   [](auto &x, auto &y) { return x.first < y.first; });
  EXPECT_EQ(all, want);
}

TEST(Processes, AMissingProgramIsReported) {
  RunResult r = runWithTimeout({"/nonexistent/frenzy-opt"}, 5);
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.err.find("cannot run /nonexistent/frenzy-opt"),
            std::string::npos);
}

} // namespace

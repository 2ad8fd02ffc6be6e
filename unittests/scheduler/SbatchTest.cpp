//===- SbatchTest.cpp - sbatch components and task order ------------------===//
//
// Which nodes share an sbatch component, in which order the components are
// written (srun numbers a heterogeneous step's tasks component by
// component), and when a plan's rank order cannot be started in order.
//
//===----------------------------------------------------------------------===//
#include "SchedTestUtil.h"

#include "frenzy/Scheduler/Sbatch.h"

using namespace frenzy::sched;
using namespace frenzy::sched::test;

namespace {

const char *kTwoTypes = "nodes:\n"
                        "  - {name: a0, gpu: A100-80G, count: 8}\n"
                        "  - {name: a1, gpu: A100-80G, count: 8}\n"
                        "  - {name: r0, gpu: RTX-A6000, count: 4}\n";

std::vector<std::string> names(const SchedCluster &c,
                               const std::vector<std::vector<int>> &comps) {
  std::vector<std::string> out;
  for (const std::vector<int> &k : comps) {
    std::string s;
    for (int n : k)
      s += (s.empty() ? "" : ",") + c.nodes()[n].name;
    out.push_back(s);
  }
  return out;
}

} // namespace

TEST(Sbatch, SameGpusPerNodeIsOneComponentAcrossTypes) {
  SchedCluster c = clusterFrom(kTwoTypes);
  Placement p = {{2, 2}, {0, 2}}; // r0:2, a0:2
  EXPECT_EQ(names(c, sbatchComponents(p, c, {})),
            (std::vector<std::string>{"r0,a0"}));
  // In plan order when the plan is known.
  std::vector<std::string> order = {"a0", "a0", "r0", "r0"};
  EXPECT_EQ(names(c, sbatchComponents(p, c, order)),
            (std::vector<std::string>{"a0,r0"}));
  EXPECT_EQ(planOrderProblem(p, c, order), "");
}

TEST(Sbatch, DifferentGpusPerNodeAreComponentsInPlanOrder) {
  SchedCluster c = clusterFrom(kTwoTypes);
  Placement p = {{0, 2}, {2, 1}}; // a0:2, r0:1
  // Without a plan: by type.
  EXPECT_EQ(names(c, sbatchComponents(p, c, {})),
            (std::vector<std::string>{"a0", "r0"}));
  // Rank 0 on r0: its component first.
  std::vector<std::string> order = {"r0", "a0", "a0"};
  EXPECT_EQ(names(c, sbatchComponents(p, c, order)),
            (std::vector<std::string>{"r0", "a0"}));
  EXPECT_EQ(planOrderProblem(p, c, order), "");
}

TEST(Sbatch, InterleavedTypesCannotStartInOrder) {
  SchedCluster c = clusterFrom(kTwoTypes);
  Placement p = {{0, 2}, {2, 1}};
  std::string why = planOrderProblem(p, c, {"a0", "r0", "a0"});
  EXPECT_NE(why.find("plan rank 1 is on node 'r0' but srun would start it "
                     "on node 'a0' (hetjob component 0)"),
            std::string::npos)
      << why;
}

// frenzy-sched serve's scripts: the tasks run the service's command (it
// decides --resume itself), quoted word by word; no checkpoint lines.
TEST(Sbatch, CommandScriptRunsTheGivenWords) {
  SchedCluster c = clusterFrom(kTwoTypes);
  SbatchJob j;
  j.name = "fz1-job-3.2";
  j.placement = {{0, 2}};
  j.rankNodes = {"a0", "a0"};
  j.hostfile = "/s/attempt-2/plan.hosts";
  j.command = {"/bin/frenzy-launch", "/s/plan.bin", "--steps=3",
               "--data=/s/it's.tokens"};
  std::string text;
  llvm::raw_string_ostream os(text);
  writeSbatchScript(j, c, os);
  EXPECT_NE(text.find("#SBATCH --job-name=fz1-job-3.2\n"), std::string::npos);
  EXPECT_NE(text.find("export SLURM_HOSTFILE='/s/attempt-2/plan.hosts'\n"),
            std::string::npos);
  EXPECT_NE(text.find("srun --mpi=pmix --kill-on-bad-exit=1 "
                      "--distribution=arbitrary --ntasks=2 "
                      "'/bin/frenzy-launch' '/s/plan.bin' '--steps=3' "
                      "'--data=/s/it'\\''s.tokens'\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("resume"), std::string::npos) << text;
  EXPECT_EQ(text.find("mkdir"), std::string::npos) << text;
  EXPECT_EQ(text.find("no 'data:'"), std::string::npos) << text;
}

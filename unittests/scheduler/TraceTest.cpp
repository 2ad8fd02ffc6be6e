//===- TraceTest.cpp - queue, trace and option-table readers --------------===//
#include "SchedTestUtil.h"

#include "frenzy/Scheduler/Options.h"
#include "frenzy/Scheduler/Traces.h"

using namespace frenzy::sched;
using namespace frenzy::sched::test;

static std::string errorOf(llvm::Error e) { return llvm::toString(std::move(e)); }

TEST(PhillyTrace, ReadsSortsAndMapsModels) {
  std::string path = writeTemp("timestamp,duration,num_gpus,gpu_time,cluster\n"
                               "2017-10-09 07:00:10,100.0,1,100.0,c1\n"
                               "2017-10-09 07:00:00,7200.0,8,57600.0,c1\n"
                               "2017-10-09 07:00:05,0.0,1,0.0,c2\n",
                               "csv");
  auto jobs = readPhillyTrace(path, {});
  ASSERT_TRUE(bool(jobs)) << errorOf(jobs.takeError());
  ASSERT_EQ(jobs->size(), 2u); // the zero-length job never ran
  EXPECT_EQ((*jobs)[0].name, "philly-3");
  EXPECT_DOUBLE_EQ((*jobs)[0].arrival, 0);
  EXPECT_EQ((*jobs)[0].userGpus, 8);
  // 16 GPU-hours: the 1.3B class (up to 16).
  EXPECT_EQ((*jobs)[0].model.name, "gpt-1.3b");
  EXPECT_DOUBLE_EQ((*jobs)[1].arrival, 10);
  EXPECT_EQ((*jobs)[1].model.name, "gpt-125m");
  EXPECT_DOUBLE_EQ((*jobs)[1].referenceSeconds, 100);
}

TEST(PhillyTrace, BadLineNamesFileLineAndField) {
  std::string path = writeTemp("timestamp,duration,num_gpus,gpu_time,cluster\n"
                               "2017-10-09 07:00:10,100.0,1,100.0,c1\n"
                               "2017-10-09 07:00:11,100.0,two,100.0,c1\n",
                               "csv");
  auto jobs = readPhillyTrace(path, {});
  ASSERT_FALSE(bool(jobs));
  EXPECT_EQ(errorOf(jobs.takeError()),
            path + ":3: field 'num_gpus': expected a positive integer, got "
                   "'two'");
  std::string bad = writeTemp("timestamp,duration,num_gpus,gpu_time,cluster\n"
                              "2017-13-09 07:00:10,100.0,1,100.0,c1\n",
                              "csv");
  auto j2 = readPhillyTrace(bad, {});
  ASSERT_FALSE(bool(j2));
  EXPECT_NE(errorOf(j2.takeError()).find(":2: field 'timestamp'"),
            std::string::npos);
}

TEST(JobQueue, BadFieldNamesFileAndLine) {
  std::string path = writeTemp(
      "jobs:\n"
      "  - name: a\n"
      "    model: {name: m, layers: 2, hidden: 64, heads: 2, vocab: 100}\n"
      "    global_batch: 8\n"
      "    seq: 64\n"
      "    steps: 10\n"
      "  - name: b\n"
      "    model: {name: m, layers: 2, hidden: 64, heads: 2, vocab: 100}\n"
      "    global_batch: 8\n"
      "    seq: 64\n",
      "yaml");
  auto q = readJobQueue(path);
  ASSERT_FALSE(bool(q));
  std::string e = errorOf(q.takeError());
  EXPECT_EQ(e.rfind(path + ":7:", 0), 0u) << e;
  EXPECT_NE(e.find("job 'b': give 'steps' or 'tokens'"), std::string::npos)
      << e;
}

TEST(JobQueue, TokensBecomeStepsAndLinesAreKept) {
  std::string path = writeTemp(
      "jobs:\n"
      "  - name: a\n"
      "    model: {name: m, layers: 2, hidden: 64, heads: 2, vocab: 100}\n"
      "    global_batch: 8\n"
      "    seq: 64\n"
      "    tokens: 5000\n"
      "    deadline: 60\n",
      "yaml");
  auto q = readJobQueue(path);
  ASSERT_TRUE(bool(q)) << errorOf(q.takeError());
  EXPECT_EQ((*q)[0].steps, 10); // ceil(5000 / 512)
  EXPECT_EQ((*q)[0].where, path + ":2");
  EXPECT_DOUBLE_EQ(*(*q)[0].deadline, 60);
}

TEST(SyntheticTrace, SeededAndDeterministic) {
  SyntheticOptions o;
  o.jobs = 50;
  auto a = syntheticTrace(o), b = syntheticTrace(o);
  o.seed = 2;
  auto c = syntheticTrace(o);
  ASSERT_EQ(a.size(), 50u);
  bool same = true, differs = false;
  for (size_t i = 0; i < a.size(); ++i) {
    same &= a[i].arrival == b[i].arrival && a[i].model.name == b[i].model.name &&
            a[i].referenceSeconds == b[i].referenceSeconds;
    differs |= a[i].arrival != c[i].arrival;
    if (i)
      EXPECT_GE(a[i].arrival, a[i - 1].arrival);
  }
  EXPECT_TRUE(same);
  EXPECT_TRUE(differs);
}

TEST(OptionTable, RoundTripsAndRejectsBadFields) {
  SchedCluster c = clusterFrom("nodes:\n"
                               "  - {name: a, gpu: A100-80G, count: 8}\n"
                               "  - {name: t, gpu: T4, count: 4}\n"
                               "network: {bandwidth_gbps: 200}\n");
  ModelDesc m{"m", 0, 12, 768, 12, 50257};
  std::vector<JobOption> opts = analyticOptions(m, 32, 1024, c);
  ASSERT_FALSE(opts.empty());
  bool mixed = false;
  for (const JobOption &o : opts)
    mixed |= o.mixed();
  EXPECT_TRUE(mixed);
  std::string text;
  llvm::raw_string_ostream os(text);
  writeOptionTable(opts, c, "test", os);
  auto back = readOptionTable(writeTemp(text, "opts"), c);
  ASSERT_TRUE(bool(back)) << errorOf(back.takeError());
  ASSERT_EQ(back->size(), opts.size());
  for (size_t i = 0; i < opts.size(); ++i) {
    EXPECT_EQ((*back)[i].layout, opts[i].layout);
    EXPECT_EQ((*back)[i].totalGpus(), opts[i].totalGpus());
    EXPECT_NEAR((*back)[i].stepSeconds, opts[i].stepSeconds,
                1e-5 * opts[i].stepSeconds);
  }
  std::string bad = writeTemp("# c\noption gpus=V100-16G:2/1 step_s=1\n", "t");
  auto e = readOptionTable(bad, c);
  ASSERT_FALSE(bool(e));
  EXPECT_NE(errorOf(e.takeError()).find(bad + ":2: field 'gpus': GPU type "
                                              "'V100-16G' is not in the "
                                              "cluster"),
            std::string::npos);
}

TEST(AnalyticOptions, MemoryDecidesFeasibility) {
  SchedCluster c = clusterFrom("nodes:\n  - {name: t, gpu: T4, count: 4}\n");
  // 13B parameters need ~208 GB of training state: four 16 GB T4s cannot.
  EXPECT_TRUE(analyticOptions({"big", 0, 40, 5120, 40, 50257}, 128, 2048, c)
                  .empty());
  auto small = analyticOptions({"s", 0, 12, 768, 12, 50257}, 32, 1024, c);
  ASSERT_FALSE(small.empty());
  for (const JobOption &o : small)
    EXPECT_LE(o.peakBytes, int64_t(16) << 30);
}

//===- SideTaskTest.cpp - side tasks and their host -----------------------===//
//
// The shipped tasks against direct computations (PageRank against a dense
// power iteration of the same graph, the resize against the bilinear
// formula), and the host's bounds: a slot ends when the main stream can go
// on or at its limit, an overrun is measured and reported, a task that
// throws, outgrows its budget or (a process) dies is dropped and reported
// while the others go on.
//
//===----------------------------------------------------------------------===//
#include "SideTaskHost.h"
#include "SideTaskSpec.h"
#include "tasks/ImageResize.h"
#include "tasks/PageRank.h"
#include "tasks/ProcessTask.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

using namespace frenzy::rt;

TEST(PageRank, GraphIsDeterministicCsr) {
  Graph a = Graph::random(500, 6, 7), b = Graph::random(500, 6, 7);
  EXPECT_EQ(a.inFrom, b.inFrom);
  EXPECT_EQ(a.inStart.back(), int64_t(a.inFrom.size()));
  int64_t out = 0;
  for (int32_t d : a.outDegree)
    out += d;
  EXPECT_EQ(out, int64_t(a.inFrom.size()));
  EXPECT_NE(a.inFrom, Graph::random(500, 6, 8).inFrom);
}

TEST(PageRank, MatchesDensePowerIteration) {
  PageRankTask::Config c;
  c.nodes = 300;
  c.degree = 3;
  c.rowsPerStep = 37; // iterations end mid-step boundaries
  c.tolerance = 1e-13;
  c.seed = 3;
  PageRankTask t(c);
  t.init(0);
  int64_t steps = 0;
  while (t.step())
    ASSERT_LT(++steps, 100000);
  EXPECT_LT(t.residual(), 1e-13);
  // The same graph as a dense column-stochastic matrix (dangling columns
  // uniform), iterated directly.
  const Graph &g = t.graph();
  int64_t n = g.nodes;
  std::vector<double> m(size_t(n * n), 0.0);
  for (int64_t v = 0; v < n; ++v)
    for (int64_t e = g.inStart[size_t(v)]; e < g.inStart[size_t(v) + 1]; ++e) {
      int64_t u = g.inFrom[size_t(e)];
      m[size_t(v * n + u)] += 1.0 / g.outDegree[size_t(u)];
    }
  for (int64_t u = 0; u < n; ++u)
    if (g.outDegree[size_t(u)] == 0)
      for (int64_t v = 0; v < n; ++v)
        m[size_t(v * n + u)] = 1.0 / double(n);
  std::vector<double> r(size_t(n), 1.0 / double(n)), next(r.size());
  for (int it = 0; it < 300; ++it) {
    for (int64_t v = 0; v < n; ++v) {
      double s = 0;
      for (int64_t u = 0; u < n; ++u)
        s += m[size_t(v * n + u)] * r[size_t(u)];
      next[size_t(v)] = 0.15 / double(n) + 0.85 * s;
    }
    r.swap(next);
  }
  double total = 0;
  for (int64_t v = 0; v < n; ++v) {
    EXPECT_NEAR(t.ranks()[size_t(v)], r[size_t(v)], 1e-10) << "node " << v;
    total += t.ranks()[size_t(v)];
  }
  EXPECT_NEAR(total, 1.0, 1e-9);
}

TEST(PageRank, RefusesBudgetItCannotMeet) {
  PageRankTask t({});
  EXPECT_THROW(t.init(1000), std::runtime_error);
}

TEST(ImageResize, BilinearValues) {
  // 2x2 image, one channel, resized to 4x4: half-pixel centres.
  float in[4] = {0, 1, 2, 3}, out[16];
  resizeBilinear(in, 2, 2, 1, out, 4, 4, 0, 4);
  // Output x = 1 samples source x = (1.5) * 0.5 - 0.5 = 0.25.
  EXPECT_FLOAT_EQ(out[0], 0.0f);              // clamped corner
  EXPECT_FLOAT_EQ(out[1], 0.25f);
  EXPECT_FLOAT_EQ(out[2], 0.75f);
  EXPECT_FLOAT_EQ(out[3], 1.0f);
  EXPECT_FLOAT_EQ(out[1 * 4 + 1], 0.25f + 2 * 0.25f);
  EXPECT_FLOAT_EQ(out[15], 3.0f);
  // A linear image stays linear inside (bilinear is exact on planes).
  const int64_t h = 20, w = 30, oh = 7, ow = 11;
  std::vector<float> img(h * w * 3), res(oh * ow * 3);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int k = 0; k < 3; ++k)
        img[(y * w + x) * 3 + k] = float(2 * x + 3 * y + k);
  resizeBilinear(img.data(), h, w, 3, res.data(), oh, ow, 0, oh);
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x) {
      double sy = std::clamp((y + 0.5) * h / double(oh) - 0.5, 0.0, h - 1.0);
      double sx = std::clamp((x + 0.5) * w / double(ow) - 0.5, 0.0, w - 1.0);
      EXPECT_NEAR(res[(y * ow + x) * 3 + 1], 2 * sx + 3 * sy + 1, 1e-4);
    }
}

TEST(ImageResize, TaskResizesEveryImage) {
  ImageResizeTask::Config c;
  c.images = 3;
  c.height = 16;
  c.width = 12;
  c.outHeight = 8;
  c.outWidth = 6;
  c.rowsPerStep = 3;
  ImageResizeTask t(c);
  t.init(0);
  int64_t steps = 1;
  while (t.step())
    ++steps;
  // Per image: one generation step and ceil(8 / 3) = 3 resize steps.
  EXPECT_EQ(steps, 3 * 4);
  EXPECT_EQ(t.imagesDone(), 3);
  // The last output is the last image resized directly.
  std::vector<float> img(16 * 12 * 3), want(8 * 6 * 3);
  generateImage(c.seed, 2, 16, 12, img.data());
  resizeBilinear(img.data(), 16, 12, 3, want.data(), 8, 6, 0, 8);
  EXPECT_EQ(t.lastOutput(), want);
}

namespace {
std::vector<SideTaskState> one(const std::string &spec) {
  std::vector<SideTaskState> v;
  v.push_back(makeSideTask(spec));
  return v;
}
} // namespace

TEST(SideTaskHost, SlotEndsWhenMainStreamCanGoOn) {
  std::vector<std::string> lines;
  SideTaskHost host(one("pagerank:nodes=2000,degree=4,rows=200"),
                    [&](const std::string &l) { lines.push_back(l); });
  host.init();
  int calls = 0;
  // Ready after the 5th question: 4 steps run (each followed by a "no").
  host.runSlot({}, [&] { return ++calls > 5; }, 10.0);
  SideReport r = host.takeStep();
  EXPECT_EQ(r.slots, 1);
  EXPECT_EQ(r.steps, 5);
  EXPECT_GT(r.harvested, 0);
  EXPECT_GT(r.delay, 0);          // the step running when it turned ready
  EXPECT_LE(r.delay, r.harvested);
  EXPECT_EQ(r.overruns, 0);
  EXPECT_TRUE(lines.empty());
  // Already ready: nothing runs, nothing is charged.
  host.runSlot({}, [] { return true; }, 10.0);
  r = host.takeStep();
  EXPECT_EQ(r.slots, 0);
  EXPECT_EQ(r.steps, 0);
  EXPECT_EQ(host.total().steps, 5);
}

TEST(SideTaskHost, SlotEndsAtItsLimitAndReportsOverrun) {
  SideTaskHost host(one("pagerank:nodes=40000,degree=8,rows=40000"),
                    [](const std::string &) {});
  host.init();
  // A limit far below one step: the first step (no estimate yet) overruns.
  host.runSlot({}, nullptr, 1e-4);
  SideReport r = host.takeStep();
  EXPECT_EQ(r.steps, 1);
  EXPECT_EQ(r.overruns, 1);
  EXPECT_GT(r.overrun, 0);
  EXPECT_NEAR(r.delay, r.overrun, 1e-9);
  // Now the step's length is known: a slot shorter than it starts nothing.
  host.runSlot({}, nullptr, 1e-4);
  r = host.takeStep();
  EXPECT_EQ(r.steps, 0);
  EXPECT_EQ(r.overruns, 0);
  // A longer slot runs whole steps and stops before the limit.
  double t0 = SideTaskHost::now();
  host.runSlot({}, nullptr, 0.05);
  double took = SideTaskHost::now() - t0;
  r = host.takeStep();
  EXPECT_GE(r.steps, 1);
  EXPECT_LT(took, 0.05 + 0.02);
}

TEST(SideTaskHost, GraceStepsRunPastTheLimitWhileBlocked) {
  SideTaskHost host(one("pagerank:nodes=20000,degree=4,rows=1000,tol=1e-15"),
                    [](const std::string &) {});
  host.init();
  int calls = 0;
  // Without grace the slot ends at its limit even though the main stream
  // is still blocked.
  host.runSlot({}, [&] { return ++calls > 1000000; }, 1e-3);
  SideReport r = host.takeStep();
  EXPECT_GT(r.steps, 0) << host.tasks()[0].task->progress();
  EXPECT_EQ(r.delay, 0);
  // With grace, short steps go on until the main stream can go on.
  host.setGrace(0.01);
  calls = 0;
  host.runSlot({}, [&] { return ++calls > 400; }, 1e-3);
  r = host.takeStep();
  EXPECT_EQ(r.steps, 400) << host.tasks()[0].task->progress();
  EXPECT_EQ(r.overruns, 0); // steps started past the limit are no overrun
  EXPECT_GT(r.delay, 0);
}

TEST(SideTaskHost, StepCapAndPriority) {
  std::vector<SideTaskState> tasks;
  tasks.push_back(makeSideTask("pagerank:nodes=500,rows=10,priority=1"));
  tasks.push_back(makeSideTask("resize:images=50,size=20x20,to=10x10,priority=5"));
  SideTaskHost host(std::move(tasks), [](const std::string &) {});
  host.init();
  host.runSlot({-1, 0, 3, 0}, nullptr, 10.0);
  EXPECT_EQ(host.takeStep().steps, 3);
  EXPECT_EQ(host.tasks()[1].steps, 3); // the higher priority ran
  EXPECT_EQ(host.tasks()[0].steps, 0);
  host.runSlot({0, 0, 2, 0}, nullptr, 10.0); // a slot naming its task
  EXPECT_EQ(host.tasks()[0].steps, 2);
}

TEST(SideTaskHost, ThrowingTaskIsDroppedAndReported) {
  std::vector<std::string> lines;
  std::vector<SideTaskState> tasks;
  tasks.push_back(makeSideTask("pagerank:nodes=500,rows=50,fail-after=3,priority=9"));
  tasks.push_back(makeSideTask("resize:images=4,size=20x20,to=10x10"));
  SideTaskHost host(std::move(tasks),
                    [&](const std::string &l) { lines.push_back(l); });
  host.init();
  host.runSlot({}, nullptr, 1.0);
  SideReport r = host.takeStep();
  EXPECT_EQ(r.failures, 1);
  // The slot goes on with the other task, which finishes inside it.
  EXPECT_EQ(host.tasks()[0].steps, 2);
  EXPECT_TRUE(host.tasks()[1].done);
  EXPECT_EQ(r.steps, 2 + host.tasks()[1].steps);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("side task 'pagerank' failed after 2 steps: threw: "
                          "fail-after=3"),
            std::string::npos)
      << lines[0];
  EXPECT_FALSE(host.active());
  host.runSlot({}, nullptr, 1.0);
  EXPECT_EQ(host.takeStep().slots, 0);
}

TEST(SideTaskHost, OverBudgetAndBadStartAreReported) {
  std::vector<std::string> lines;
  std::vector<SideTaskState> tasks;
  tasks.push_back(makeSideTask("pagerank:nodes=100000,memory=1000"));
  tasks.push_back(makeSideTask("resize:images=2,size=20x20,to=10x10"));
  SideTaskHost host(std::move(tasks),
                    [&](const std::string &l) { lines.push_back(l); });
  host.init();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("cannot start: pagerank of 100000 nodes needs"),
            std::string::npos)
      << lines[0];
  // A slot's own budget below what the task holds after a step.
  host.runSlot({1, 0, 0, 100}, nullptr, 1.0);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("over its budget of 100"), std::string::npos)
      << lines[1];
  EXPECT_FALSE(host.active());
}

TEST(SideTaskSpec, MalformedSpecsSayWhat) {
  auto msg = [](const std::string &s) {
    try {
      makeSideTask(s);
    } catch (const std::invalid_argument &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("pagerank:nodes=x"),
            "--side-task 'pagerank:nodes=x': 'nodes': 'x' is not an integer >= 1");
  EXPECT_EQ(msg("resize:size=12"),
            "--side-task 'resize:size=12': 'size': '12' is not HEIGHTxWIDTH "
            "(e.g. 120x160)");
  EXPECT_EQ(msg("sort:n=1"), "--side-task 'sort:n=1': unknown kind 'sort'; "
                             "use pagerank, resize, train or process");
  EXPECT_EQ(msg("pagerank:color=red"),
            "--side-task 'pagerank:color=red': 'color': unknown key for this kind");
  EXPECT_EQ(msg("train:plan=a.bin"),
            "--side-task 'train:plan=a.bin': 'plan': train needs "
            "plan=PLAN.bin,data=TOKENS.bin");
  SideTaskBinding b = parseSideTaskArg("pr=pagerank:nodes=10");
  EXPECT_EQ(b.name, "pr");
  EXPECT_EQ(b.spec, "pagerank:nodes=10");
  b = parseSideTaskArg("resize:size=2x2");
  EXPECT_EQ(b.name, "resize");
}

TEST(ProcessTask, RunsOnlyWhileResumedAndCrashIsSeen) {
  // A counter that appends while running: stopped, it must not grow.
  char dir[] = "/tmp/frenzy-sidetask-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir));
  std::string file = std::string(dir) + "/count";
  std::vector<std::string> lines;
  SideTaskHost host(one("process:while true; do echo x >> " + file +
                        "; sleep 0.001; done"),
                    [&](const std::string &l) { lines.push_back(l); });
  host.init();
  auto size = [&] {
    FILE *f = std::fopen(file.c_str(), "r");
    if (!f)
      return 0L;
    std::fseek(f, 0, SEEK_END);
    long n = std::ftell(f);
    std::fclose(f);
    return n;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(size(), 0L); // stopped from the start
  host.runSlot({}, nullptr, 0.1);
  SideReport r = host.takeStep();
  EXPECT_NEAR(r.harvested, 0.1, 0.05);
  long after = size();
  EXPECT_GT(after, 0L);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(size(), after); // paused again
  host.finishAll();
  std::remove(file.c_str());
  rmdir(dir);

  // A process that kills itself inside its slot.
  SideTaskHost crash(one("process:sleep 0.01; kill -SEGV $$"),
                     [&](const std::string &l) { lines.push_back(l); });
  crash.init();
  crash.runSlot({}, nullptr, 2.0);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("killed by signal 11"), std::string::npos)
      << lines[0];
  EXPECT_EQ(crash.takeStep().failures, 1);
}

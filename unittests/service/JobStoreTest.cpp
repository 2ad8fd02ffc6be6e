//===- JobStoreTest.cpp - the service's SQLite queue ----------------------===//
//
// State changes are whole or absent: each test drives the queue through a
// job's life and checks the tables' invariants, the refusals of changes
// from the wrong state, persistence across reopening, and the one-line
// errors for a damaged or locked file.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Service/JobStore.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sqlite3.h>

using namespace frenzy::service;

namespace {

class JobStoreTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("jobstore", dir));
    root = dir.str().str();
    path = root + "/queue.db";
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  std::unique_ptr<JobStore> open() {
    auto s = JobStore::open(path, 200);
    EXPECT_TRUE(bool(s)) << (s ? "" : llvm::toString(s.takeError()));
    return s ? std::move(*s) : nullptr;
  }
  static JobRow job(int64_t uid) {
    JobRow j;
    j.uid = uid;
    j.model = "m.onnx";
    j.optionsKey = "k";
    j.steps = 3;
    j.globalBatch = 8;
    j.seq = 64;
    j.submitted = 100;
    return j;
  }
  static AllocationRow alloc(int64_t job, int64_t attempt,
                             const char *placement = "0:1") {
    AllocationRow a;
    a.job = job;
    a.attempt = attempt;
    a.placement = placement;
    a.option = "1 cpu";
    return a;
  }
  std::string root, path;
};

TEST_F(JobStoreTest, LifeOfAJobAndItsEvents) {
  auto s = open();
  JobRow j = job(1000);
  ASSERT_FALSE(bool(s->addJob(j)));
  EXPECT_EQ(j.id, 1);
  ASSERT_FALSE(bool(s->startAttempt(j.id, alloc(j.id, 1), 101)));
  ASSERT_FALSE(bool(s->setHandle(j.id, "local:5:6")));
  EXPECT_EQ(*s->checkConsistency(), "");
  auto a = s->allocation(j.id);
  ASSERT_TRUE(a && *a);
  EXPECT_EQ((*a)->handle, "local:5:6");
  // A lost attempt goes back to the queue; the next one finishes.
  ASSERT_FALSE(bool(s->endAttempt(j.id, JobState::Queued, "lost", 102)));
  EXPECT_EQ(*s->checkConsistency(), "");
  ASSERT_FALSE(bool(s->startAttempt(j.id, alloc(j.id, 2), 103)));
  ASSERT_FALSE(bool(s->endAttempt(j.id, JobState::Done, "", 104)));
  auto row = s->job(j.id);
  ASSERT_TRUE(row && *row);
  EXPECT_EQ((*row)->state, JobState::Done);
  EXPECT_EQ((*row)->attempts, 2);
  EXPECT_EQ((*row)->started, 101);
  EXPECT_EQ((*row)->finished, 104);
  auto ev = s->events(j.id);
  ASSERT_TRUE(bool(ev));
  std::vector<std::string> kinds;
  for (const EventRow &e : *ev)
    kinds.push_back(e.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"submitted", "started",
                                             "requeued", "started", "done"}));
  EXPECT_TRUE(s->allocations()->empty());
}

TEST_F(JobStoreTest, WrongStateChangesAreRefusedWhole) {
  auto s = open();
  JobRow j = job(1);
  ASSERT_FALSE(bool(s->addJob(j)));
  // Not running: ending an attempt fails and changes nothing.
  llvm::Error e = s->endAttempt(j.id, JobState::Done, "", 5);
  ASSERT_TRUE(bool(e));
  EXPECT_NE(llvm::toString(std::move(e)).find("is not running"),
            std::string::npos);
  ASSERT_FALSE(bool(s->startAttempt(j.id, alloc(j.id, 1), 6)));
  // Started twice: the second is refused, the allocation stays one.
  llvm::Error twice = s->startAttempt(j.id, alloc(j.id, 2), 7);
  EXPECT_TRUE(bool(twice));
  llvm::consumeError(std::move(twice));
  EXPECT_EQ(s->allocations()->size(), 1u);
  EXPECT_EQ((*s->job(j.id))->attempts, 1);
  llvm::Error q = s->endQueued(j.id, JobState::Cancelled, "x", 8);
  EXPECT_TRUE(bool(q));
  llvm::consumeError(std::move(q));
  EXPECT_EQ(*s->checkConsistency(), "");
}

TEST_F(JobStoreTest, SurvivesReopeningAndFiltersByUser) {
  {
    auto s = open();
    JobRow a = job(1), b = job(2);
    ASSERT_FALSE(bool(s->addJob(a)));
    ASSERT_FALSE(bool(s->addJob(b)));
    ASSERT_FALSE(bool(s->startAttempt(b.id, alloc(b.id, 1), 9)));
    ASSERT_FALSE(bool(s->putOptionTable("k", "option gpus=cpu:1/1\n")));
  }
  auto s = open();
  EXPECT_EQ(s->jobs()->size(), 2u);
  auto mine = s->jobs(int64_t(2));
  ASSERT_TRUE(bool(mine));
  ASSERT_EQ(mine->size(), 1u);
  EXPECT_EQ((*mine)[0].state, JobState::Running);
  EXPECT_EQ(s->queued()->size(), 1u);
  EXPECT_EQ(**s->optionTable("k"), "option gpus=cpu:1/1\n");
  EXPECT_FALSE(*s->optionTable("other"));
}

TEST_F(JobStoreTest, DamagedFileIsOneError) {
  {
    std::ofstream f(path, std::ios::binary);
    for (int i = 0; i < 512; ++i)
      f << "not a database";
  }
  auto s = JobStore::open(path, 200);
  ASSERT_FALSE(bool(s));
  std::string msg = llvm::toString(s.takeError());
  EXPECT_NE(msg.find("file is not a database"), std::string::npos) << msg;
  EXPECT_NE(msg.find("restore it from a backup"), std::string::npos) << msg;
}

TEST_F(JobStoreTest, LockedFileFailsAfterTheTimeout) {
  open(); // creates it
  sqlite3 *other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr),
            SQLITE_OK);
  auto s = JobStore::open(path, 100);
  if (s) {
    // Readers pass in WAL mode; the first write must time out.
    JobRow j = job(1);
    llvm::Error e = (*s)->addJob(j);
    ASSERT_TRUE(bool(e));
    std::string msg = llvm::toString(std::move(e));
    EXPECT_NE(msg.find("database is locked"), std::string::npos) << msg;
  } else {
    std::string msg = llvm::toString(s.takeError());
    EXPECT_NE(msg.find("database is locked"), std::string::npos) << msg;
  }
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  auto again = open();
  EXPECT_EQ(*again->checkConsistency(), "");
}

// What the status page reads (StatusPage.cpp): attempts rebuilt from the
// events table (allocations hold only running ones), and a snapshot that a
// write on another connection does not change.
TEST_F(JobStoreTest, SpansFollowAttemptsAndTheWindow) {
  auto s = open();
  JobRow a = job(7), b = job(7);
  ASSERT_FALSE(bool(s->addJob(a)));
  ASSERT_FALSE(bool(s->addJob(b)));
  // a: requeued once (lost at 120), then done at 150; b: still running.
  // An option with parentheses of its own (FIFO's user requests have them).
  AllocationRow first1 = alloc(a.id, 1, "0:2");
  first1.option = "user request 2xcpu (runs dp 2)";
  ASSERT_FALSE(bool(s->startAttempt(a.id, first1, 110)));
  ASSERT_FALSE(bool(s->endAttempt(a.id, JobState::Queued, "lost", 120)));
  ASSERT_FALSE(bool(s->startAttempt(a.id, alloc(a.id, 2, "1:1,0:1"), 130)));
  ASSERT_FALSE(bool(s->endAttempt(a.id, JobState::Done, "", 150)));
  ASSERT_FALSE(bool(s->startAttempt(b.id, alloc(b.id, 1, "0:1"), 140)));
  auto all = s->attemptSpans(0);
  ASSERT_TRUE(bool(all)) << llvm::toString(all.takeError());
  ASSERT_EQ(all->size(), 3u);
  const AttemptSpan &first = (*all)[0], &second = (*all)[1], &run = (*all)[2];
  EXPECT_EQ(first.job, a.id);
  EXPECT_EQ(first.attempt, 1);
  EXPECT_EQ(first.placement, "0:2");
  EXPECT_EQ(first.option, "user request 2xcpu (runs dp 2)");
  EXPECT_EQ(first.start, 110);
  EXPECT_EQ(first.end, 120);
  EXPECT_EQ(first.outcome, "requeued");
  EXPECT_EQ(second.attempt, 2);
  EXPECT_EQ(second.placement, "1:1,0:1");
  EXPECT_EQ(second.end, 150);
  EXPECT_EQ(second.outcome, "done");
  EXPECT_EQ(run.job, b.id);
  EXPECT_EQ(run.start, 140);
  EXPECT_LT(run.end, 0);
  EXPECT_EQ(run.outcome, "");
  // Attempts that ended before the window are left out; running ones stay.
  auto recent = s->attemptSpans(125);
  ASSERT_TRUE(bool(recent));
  ASSERT_EQ(recent->size(), 2u);
  EXPECT_EQ((*recent)[0].attempt, 2);
  EXPECT_EQ((*recent)[1].job, b.id);
}

TEST_F(JobStoreTest, ReadTransactionSeesOneState) {
  auto writer = open(), reader = open();
  JobRow j = job(7);
  ASSERT_FALSE(bool(writer->addJob(j)));
  ASSERT_FALSE(bool(writer->startAttempt(j.id, alloc(j.id, 1, "0:1"), 101)));
  size_t allocsSeen = 0;
  std::string stateSeen;
  llvm::Error e = reader->readTransaction([&]() -> llvm::Error {
    auto a = reader->allocations();
    if (!a)
      return a.takeError();
    allocsSeen = a->size();
    // The job ends on the writer's connection in the middle of the read:
    // the reader's snapshot still shows it running with its allocation.
    if (llvm::Error w = writer->endAttempt(j.id, JobState::Done, "", 102))
      return w;
    auto row = reader->job(j.id);
    if (!row)
      return row.takeError();
    stateSeen = stateName((*row)->state);
    return llvm::Error::success();
  });
  ASSERT_FALSE(bool(e)) << llvm::toString(std::move(e));
  EXPECT_EQ(allocsSeen, 1u);
  EXPECT_EQ(stateSeen, "running");
  // After the snapshot the reader sees the new state.
  EXPECT_EQ((*reader->job(j.id))->state, JobState::Done);
  EXPECT_TRUE(reader->allocations()->empty());
}

} // namespace

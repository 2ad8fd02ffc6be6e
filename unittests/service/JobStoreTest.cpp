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
  static AllocationRow alloc(int64_t job, int64_t attempt) {
    AllocationRow a;
    a.job = job;
    a.attempt = attempt;
    a.placement = "0:1";
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

} // namespace

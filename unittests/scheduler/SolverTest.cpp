//===- SolverTest.cpp - the CBC wrapper: known optima and clear errors ----===//
#include "frenzy/Scheduler/Solver.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace frenzy::sched;

namespace {

std::string errorOf(llvm::Expected<LinearProgram::Solution> s) {
  EXPECT_FALSE(bool(s));
  return s ? std::string() : llvm::toString(s.takeError());
}

} // namespace

// max 3x + 2y, x + y <= 4.5, x <= 2.5, x and y integer: the LP relaxation
// (x = 2.5, y = 2, 11.5) is not the integer optimum (x = 2, y = 2, 10).
TEST(Solver, SmallMilpReachesItsKnownOptimum) {
  LinearProgram p("toy-milp");
  int x = p.addColumn(3, 0, 10, true);
  int y = p.addColumn(2, 0, 10, true);
  p.addRow({{x, 1}, {y, 1}}, -INFINITY, 4.5);
  p.addRow({{x, 1}}, -INFINITY, 2.5);
  auto s = p.solve({});
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_TRUE(s->optimal);
  EXPECT_NEAR(s->objective, 10, 1e-6);
  EXPECT_NEAR(s->values[size_t(x)], 2, 1e-6);
  EXPECT_NEAR(s->values[size_t(y)], 2, 1e-6);
}

// max x + y, x + 2y <= 4, 3x + y <= 6: the vertex (1.6, 1.2), 2.8.
TEST(Solver, LinearProgramWithoutIntegers) {
  LinearProgram p("toy-lp");
  int x = p.addColumn(1, 0, INFINITY);
  int y = p.addColumn(1, 0, INFINITY);
  p.addRow({{x, 1}, {y, 2}}, -INFINITY, 4);
  p.addRow({{x, 3}, {y, 1}}, -INFINITY, 6);
  auto s = p.solve({});
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_NEAR(s->objective, 2.8, 1e-6);
  EXPECT_NEAR(s->values[size_t(x)], 1.6, 1e-6);
  EXPECT_NEAR(s->values[size_t(y)], 1.2, 1e-6);
}

TEST(Solver, MinimisesToo) {
  LinearProgram p("toy-min", /*maximize=*/false);
  int x = p.addColumn(2, 0, 5, true);
  p.addRow({{x, 1}}, 1.5, INFINITY); // x >= 1.5, integer: 2
  auto s = p.solve({});
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_NEAR(s->values[size_t(x)], 2, 1e-6);
}

TEST(Solver, InfeasibleLpIsAnErrorNamingTheProgram) {
  LinearProgram p("contradiction");
  int x = p.addColumn(1, 0, 10);
  p.addRow({{x, 1}}, 2, INFINITY);
  p.addRow({{x, 1}}, -INFINITY, 1);
  std::string e = errorOf(p.solve({}));
  EXPECT_NE(e.find("program 'contradiction'"), std::string::npos) << e;
  EXPECT_NE(e.find("infeasible"), std::string::npos) << e;
}

TEST(Solver, InfeasibleMilpIsAnError) {
  LinearProgram p("odd");
  int x = p.addColumn(1, 0, 10, true);
  p.addRow({{x, 2}}, 1, 1); // 2x = 1 has no integer solution
  std::string e = errorOf(p.solve({}));
  EXPECT_NE(e.find("infeasible"), std::string::npos) << e;
}

TEST(Solver, UnboundedIsAnError) {
  LinearProgram p("open");
  int x = p.addColumn(1, 0, INFINITY);
  int y = p.addColumn(0, 0, INFINITY);
  p.addRow({{x, 1}, {y, -1}}, -INFINITY, 0); // x <= y, both unbounded
  // CBC may classify it as primal infeasible (dual infeasible); either
  // way it is one error line, not a crash or a made-up point.
  std::string e = errorOf(p.solve({}));
  EXPECT_NE(e.find("program 'open'"), std::string::npos) << e;
  EXPECT_NE(e.find("unbounded"), std::string::npos) << e;
}

TEST(Solver, EmptyBoundsAndNonFiniteCostsAreRefused) {
  LinearProgram p("bad-column");
  p.addColumn(1, 3, 2);
  EXPECT_NE(errorOf(p.solve({})).find("column 0"), std::string::npos);
  LinearProgram q("nan-cost");
  q.addColumn(NAN, 0, 1);
  EXPECT_NE(errorOf(q.solve({})).find("non-finite"), std::string::npos);
}

TEST(Solver, AFeasibleStartIsCheckedAndAnInfeasibleOneIgnored) {
  LinearProgram p("start");
  int x = p.addColumn(1, 0, 1, true);
  int y = p.addColumn(1, 0, 1, true);
  p.addRow({{x, 1}, {y, 1}}, -INFINITY, 1);
  EXPECT_TRUE(p.feasible({1, 0}));
  EXPECT_FALSE(p.feasible({1, 1}));
  EXPECT_FALSE(p.feasible({0.5, 0}));
  std::vector<double> bad{1, 1};
  auto s = p.solve({}, &bad);
  ASSERT_TRUE(bool(s)) << llvm::toString(s.takeError());
  EXPECT_NEAR(s->objective, 1, 1e-6);
  EXPECT_TRUE(p.feasible(s->values));
}

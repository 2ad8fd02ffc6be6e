//===- Solver.cpp - LinearProgram on COIN-OR CBC --------------------------===//
//
// CBC was chosen over GLPK because Sia's own artifact solves its MILP with
// CBC (so a difference in results is not a difference of solver), its
// branch-and-cut is much faster than GLPK's on these assignment programs,
// and it takes a warm start and a wall-time limit, which keeps a decision
// bounded. Rows are built here in column-major form, the layout
// Cbc_loadProblem wants.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Scheduler/Solver.h"

#include <coin/Cbc_C_Interface.h>

#include <cmath>
#include <memory>
#include <string>

using namespace frenzy;
using namespace frenzy::sched;

int LinearProgram::addColumn(double o, double lo, double hi, bool isInt) {
  obj.push_back(o);
  colLo.push_back(lo);
  colHi.push_back(hi);
  integer.push_back(isInt);
  return int(obj.size() - 1);
}

void LinearProgram::addRow(const std::vector<std::pair<int, double>> &terms,
                           double lo, double hi) {
  rowTerms.push_back(terms);
  rowLo.push_back(lo);
  rowHi.push_back(hi);
}

namespace {
struct ModelDeleter {
  void operator()(Cbc_Model *m) const { Cbc_deleteModel(m); }
};
} // namespace

namespace frenzy::sched {
/// Builds the CBC model of a program (a friend of LinearProgram).
struct CbcModelBuilder {
  static std::unique_ptr<Cbc_Model, ModelDeleter>
  build(const LinearProgram &p) {
    size_t n = p.obj.size();
    std::vector<std::vector<std::pair<int, double>>> cols(n);
    for (size_t r = 0; r < p.rowTerms.size(); ++r)
      for (auto [c, v] : p.rowTerms[r])
        cols[size_t(c)].push_back({int(r), v});
    std::vector<CoinBigIndex> start{0};
    std::vector<int> index;
    std::vector<double> value;
    for (const auto &col : cols) {
      for (auto [r, v] : col)
        index.push_back(r), value.push_back(v);
      start.push_back(CoinBigIndex(index.size()));
    }
    std::unique_ptr<Cbc_Model, ModelDeleter> m(Cbc_newModel());
    Cbc_loadProblem(m.get(), int(n), int(p.rowLo.size()), start.data(),
                    index.data(), value.data(), p.colLo.data(),
                    p.colHi.data(), p.obj.data(), p.rowLo.data(),
                    p.rowHi.data());
    for (size_t c = 0; c < n; ++c)
      if (p.integer[c])
        Cbc_setInteger(m.get(), int(c));
    Cbc_setObjSense(m.get(), p.maximize ? -1 : 1);
    return m;
  }
};
} // namespace frenzy::sched

bool LinearProgram::feasible(const std::vector<double> &x) const {
  const double tol = 1e-6;
  for (size_t c = 0; c < obj.size(); ++c)
    if (x[c] < colLo[c] - tol || x[c] > colHi[c] + tol ||
        (integer[c] && std::abs(x[c] - std::round(x[c])) > tol))
      return false;
  for (size_t r = 0; r < rowLo.size(); ++r) {
    double v = 0;
    for (auto [c, coef] : rowTerms[r])
      v += coef * x[size_t(c)];
    if (v < rowLo[r] - tol || v > rowHi[r] + tol)
      return false;
  }
  return true;
}

llvm::Expected<LinearProgram::Solution>
LinearProgram::solve(const Limits &limits,
                     const std::vector<double> *start) const {
  auto fail = [&](const std::string &why) {
    return llvm::createStringError(
        std::make_error_code(std::errc::invalid_argument),
        llvm::Twine("program '") + programName + "' (" +
            std::to_string(columns()) + " columns, " +
            std::to_string(rows()) + " rows): " + why);
  };
  if (obj.empty())
    return Solution{{}, 0, true};
  for (size_t c = 0; c < obj.size(); ++c)
    if (!(colLo[c] <= colHi[c]) || !std::isfinite(obj[c]))
      return fail("column " + std::to_string(c) +
                  " has empty bounds or a non-finite objective");
  auto m = CbcModelBuilder::build(*this);
  Cbc_setLogLevel(m.get(), 0);
  Cbc_setMaximumSeconds(m.get(), limits.seconds);
  Cbc_setAllowableFractionGap(m.get(), limits.relativeGap);
  Cbc_setParameter(m.get(), "threads", "1");
  // The warm start: CBC 2.10's C interface (Cbc_setMIPStartI) reports an
  // illegal column index and drops the start on these models, so the start
  // is checked here and kept as the answer when CBC stops without a better
  // one (a time limit).
  bool startFeasible = start && start->size() == obj.size() && feasible(*start);
  Cbc_solve(m.get());
  // CBC can report an unbounded LP as "proven infeasible" (its dual is
  // infeasible); the unbounded flags are checked first, and an LP's
  // infeasibility is reported as either.
  if (Cbc_isContinuousUnbounded(m.get()) || Cbc_secondaryStatus(m.get()) == 7)
    return fail("unbounded");
  if (Cbc_isProvenInfeasible(m.get()))
    return fail(Cbc_getNumIntegers(m.get()) ? "infeasible"
                                            : "infeasible or unbounded");
  if (Cbc_isAbandoned(m.get()))
    return fail("abandoned by the solver (numerical difficulties)");
  const double *x = Cbc_getColSolution(m.get());
  bool optimal = Cbc_isProvenOptimal(m.get());
  Solution s;
  if (x && (optimal || Cbc_numberSavedSolutions(m.get()) > 0 ||
            Cbc_getNumIntegers(m.get()) == 0)) {
    s.values.assign(x, x + obj.size());
    s.objective = Cbc_getObjValue(m.get());
    s.optimal = optimal;
  }
  double startValue = 0;
  if (startFeasible)
    for (size_t c = 0; c < obj.size(); ++c)
      startValue += obj[c] * (*start)[c];
  if (startFeasible && (s.values.empty() ||
                        (maximize ? startValue > s.objective + 1e-9
                                  : startValue < s.objective - 1e-9))) {
    s.values = *start;
    s.objective = startValue;
    s.optimal = false;
  }
  if (s.values.empty())
    return fail("no feasible point within " + std::to_string(limits.seconds) +
                " s");
  return s;
}

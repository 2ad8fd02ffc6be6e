//===- Solver.h - linear and mixed-integer programs for the policies -*- C++ -*-===//
//
// The faithful baselines state their allocation as the papers do: Sia as an
// integer program, Gavel as a linear program. This is the one place that
// talks to the solver (COIN-OR CBC through its C interface, Debian's
// coinor-libcbc-dev), so a policy only builds rows and columns and reads
// back values. A program without integer columns is solved as an LP (CBC
// hands it to Clp). Errors, never aborts: an infeasible or unbounded
// program, or a time limit hit before any feasible point, is an llvm::Error
// naming the program.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SCHEDULER_SOLVER_H
#define FRENZY_SCHEDULER_SOLVER_H

#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace frenzy::sched {

class LinearProgram {
public:
  explicit LinearProgram(std::string name, bool maximize = true)
      : programName(std::move(name)), maximize(maximize) {}
  /// A column (variable) with objective coefficient `obj` in [lo, hi];
  /// returns its index.
  int addColumn(double obj, double lo, double hi, bool integer = false);
  /// lo <= sum(coef x col) <= hi; +-infinity for a one-sided row.
  void addRow(const std::vector<std::pair<int, double>> &terms, double lo,
              double hi);
  size_t columns() const { return obj.size(); }
  size_t rows() const { return rowLo.size(); }
  const std::string &name() const { return programName; }

  struct Limits {
    double seconds = 10;        // wall time of one solve
    double relativeGap = 1e-4;  // MILP: stop within this of the bound
  };
  struct Solution {
    std::vector<double> values;
    double objective = 0;
    bool optimal = false; // false: the best found within the limits
  };
  /// Solves; `start` (one value per column), when feasible, is the answer
  /// whenever the solver stops (time limit) without a better point.
  llvm::Expected<Solution> solve(const Limits &limits,
                                 const std::vector<double> *start = nullptr) const;

  /// Whether `x` satisfies every bound, integrality and row (1e-6).
  bool feasible(const std::vector<double> &x) const;

private:
  friend struct CbcModelBuilder;
  std::string programName;
  bool maximize;
  std::vector<double> obj, colLo, colHi;
  std::vector<bool> integer;
  std::vector<double> rowLo, rowHi;
  std::vector<std::vector<std::pair<int, double>>> rowTerms;
};

} // namespace frenzy::sched

#endif

//===- ScheduleAttrs.cpp - the pipeline schedule attributes ---------------===//
//
// `#frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 2,
// stages = [[F0 F1 B0 B1], [F0 B0 F1 B1]]>]>`: the actions are bare words
// F<k>/B<k> (MLIR keywords), parsed into ScheduleAction values once, here;
// the verifier holds every stage to running each micro-batch forward, then
// backward, once, and names the first action that does not.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"

#include "mlir/IR/DialectImplementation.h"

#include <set>

using namespace mlir;
using namespace frenzy;

static void printAction(llvm::raw_ostream &os, ScheduleAction a) {
  os << (a.backward ? 'B' : 'F') << a.microBatch;
}

// [F0 F1 B0 B1]
Attribute StageOrderAttr::parse(AsmParser &parser, Type) {
  SmallVector<ScheduleAction> actions;
  if (parser.parseLSquare())
    return {};
  StringRef word;
  while (succeeded(parser.parseOptionalKeyword(&word))) {
    int64_t mb;
    if (!(word.starts_with("F") || word.starts_with("B")) ||
        word.drop_front().getAsInteger(10, mb)) {
      parser.emitError(parser.getCurrentLocation(), "schedule: '")
          << word << "' is not F<k> or B<k> (micro-batch k's forward or "
          << "backward)";
      return {};
    }
    actions.push_back({word.starts_with("B"), mb});
  }
  if (parser.parseRSquare())
    return {};
  return StageOrderAttr::get(parser.getContext(), actions);
}

void StageOrderAttr::print(AsmPrinter &printer) const {
  printer << '[';
  llvm::interleave(
      getActions(), printer.getStream(),
      [&](ScheduleAction a) { printAction(printer.getStream(), a); }, " ");
  printer << ']';
}

LogicalResult PipelineOrderAttr::check(
    function_ref<InFlightDiagnostic()> emitError) const {
  int64_t microBatches = getMicroBatches();
  ArrayRef<StageOrderAttr> stages = getStages();
  if (microBatches < 0)
    return emitError() << "micro_batches = " << microBatches
                       << " is negative";
  for (auto [s, order] : llvm::enumerate(stages)) {
    std::set<int64_t> forwarded, done;
    for (ScheduleAction a : order.getActions()) {
      std::string word;
      llvm::raw_string_ostream os(word);
      printAction(os, a);
      if (a.microBatch < 0 || a.microBatch >= microBatches)
        return emitError() << "stage " << s << " runs " << word
                           << ", but the pipeline has " << microBatches
                           << " micro-batches (0.." << microBatches - 1
                           << ")";
      bool fresh = a.backward ? (forwarded.count(a.microBatch) &&
                                 done.insert(a.microBatch).second)
                              : forwarded.insert(a.microBatch).second;
      if (!fresh)
        return emitError() << "stage " << s << ": " << word
                           << " repeats, or is a backward before its forward";
    }
    if (int64_t(done.size()) != microBatches)
      return emitError() << "stage " << s << " must run each of the "
                         << microBatches
                         << " micro-batches forward and backward once";
  }
  return success();
}

LogicalResult
ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                     StringRef kind, ArrayRef<PipelineOrderAttr> pipelines) {
  if (kind != "1f1b" && kind != "gpipe")
    return emitError() << "schedule: kind \"" << kind
                       << "\" must be \"1f1b\" or \"gpipe\"";
  if (pipelines.empty())
    return emitError() << "schedule: pipelines is empty";
  for (auto [p, order] : llvm::enumerate(pipelines))
    if (failed(order.check([&, p = p] {
          return emitError() << "schedule: pipelines[" << p << "]: ";
        })))
      return failure();
  return success();
}

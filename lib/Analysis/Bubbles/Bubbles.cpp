//===- Bubbles.cpp - idle intervals of a pipeline schedule ----------------===//
//
// The play follows the runtime's rules: a stage runs its phases in the
// schedule's order, one at a time; a forward needs the previous stage's
// forward of the same micro-batch, a backward the next stage's backward.
// A boundary transfer (Stage::sendSeconds) keeps both ends busy, as the
// runtime's send (copy and post) and receive do: the sender after its
// phase, the receiver before its own once the send has ended. Every
// rank then meets every other in the gradient norm's all-reduce, so the
// step's tail is one barrier: the gradient reduction starts when the last
// stage of any pipeline finishes its backwards. A gap in a stage's time is
// named after the dependency that held it, so the report says why.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Analysis/Bubbles/Bubbles.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

using namespace frenzy::bubbles;
using llvm::formatv;

std::string Phase::name() const {
  return (backward ? "B" : "F") + std::to_string(microBatch);
}

int64_t Stage::liveBytes(int64_t inFlight) const {
  int64_t live = peakBytes - (peakInFlight - inFlight) * activationBytes;
  return std::max<int64_t>(0, live);
}

static llvm::Error fail(const llvm::Twine &what) {
  return llvm::createStringError(what);
}

llvm::Error ScheduleProblem::check() const {
  if (pipelines.empty())
    return fail("the schedule has no pipeline");
  for (size_t p = 0; p < pipelines.size(); ++p) {
    if (pipelines[p].empty())
      return fail(formatv("pipeline {0} has no stage", p));
    for (size_t s = 0; s < pipelines[p].size(); ++s) {
      const Stage &st = pipelines[p][s];
      std::string at = formatv("pipeline {0} stage {1}", p, s).str();
      if (!(st.forward >= 0 && st.backward >= 0 && st.sendSeconds >= 0 &&
            std::isfinite(st.forward) && std::isfinite(st.backward) &&
            std::isfinite(st.sendSeconds)))
        return fail(at + ": forward, backward and send seconds must be "
                         "finite and not negative");
      for (const Stage::BackwardSend &b : st.backwardSends)
        if (b.to < 0 || b.to >= int64_t(pipelines[p].size()) ||
            b.to == int64_t(s) || !(b.seconds >= 0 && std::isfinite(b.seconds)))
          return fail(at + formatv(": a backward send to stage {0} of {1} "
                                   "seconds names no other stage or is "
                                   "negative",
                                   b.to, b.seconds)
                                .str());
      std::set<int32_t> fwd, bwd;
      for (const Phase &ph : st.order) {
        bool fresh = ph.backward ? fwd.count(ph.microBatch) &&
                                       bwd.insert(ph.microBatch).second
                                 : fwd.insert(ph.microBatch).second;
        if (!fresh || ph.microBatch < 0)
          return fail(at + ": " + ph.name() +
                      " repeats or is a backward before its forward");
      }
      size_t first = pipelines[p][0].order.size();
      if (bwd.size() != fwd.size() || st.order.size() != first)
        return fail(at + ": every stage of a pipeline runs the same "
                         "micro-batches forward and backward once");
    }
  }
  if (!(allReduceSeconds >= 0 && optimizerSeconds >= 0))
    return fail("all-reduce and optimizer seconds must not be negative");
  return llvm::Error::success();
}

namespace {
constexpr double kEps = 1e-12;

std::string stageName(int p, int s) { return formatv("p{0} s{1}", p, s); }
} // namespace

llvm::Expected<BubbleAnalysis>
frenzy::bubbles::analyze(const ScheduleProblem &problem) {
  if (llvm::Error e = problem.check())
    return std::move(e);
  BubbleAnalysis out;
  struct State {
    size_t next = 0;
    double free = 0;
    int64_t held = 0;
    // When a phase's tensor reached its neighbour, and (xEnd) when a
    // backward's backward sends reached theirs.
    std::map<int32_t, double> fEnd, bEnd, xEnd;
  };
  std::vector<std::vector<State>> st;
  for (const auto &pipe : problem.pipelines)
    st.emplace_back(pipe.size());
  for (size_t p = 0; p < problem.pipelines.size(); ++p)
    for (size_t s = 0; s < problem.pipelines[p].size(); ++s)
      out.stages.push_back({int(p), int(s), {}, 0});
  auto timeline = [&](size_t p, size_t s) -> StageTimeline & {
    size_t i = 0;
    for (size_t q = 0; q < p; ++q)
      i += problem.pipelines[q].size();
    return out.stages[i + s];
  };
  auto gap = [&](size_t p, size_t s, double from, double to, std::string before,
                 std::string cause) {
    if (to - from <= kEps * std::max(1.0, to))
      return;
    const Stage &stage = problem.pipelines[p][s];
    Bubble b;
    b.pipeline = int(p);
    b.stage = int(s);
    b.start = from;
    b.seconds = to - from;
    b.inFlight = st[p][s].held;
    b.freeBytes = stage.capacityBytes - stage.liveBytes(b.inFlight);
    b.before = std::move(before);
    b.cause = std::move(cause);
    out.bubbles.push_back(std::move(b));
  };

  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t p = 0; p < problem.pipelines.size(); ++p) {
      const auto &pipe = problem.pipelines[p];
      for (size_t s = 0; s < pipe.size(); ++s) {
        State &me = st[p][s];
        const Stage &stage = pipe[s];
        while (me.next < stage.order.size()) {
          const Phase &ph = stage.order[me.next];
          // The phase this one needs from a neighbouring stage, if any,
          // and what receiving its tensor keeps this stage busy.
          double ready = 0, recv = 0;
          std::string cause;
          if (!ph.backward && s > 0) {
            auto it = st[p][s - 1].fEnd.find(ph.microBatch);
            if (it == st[p][s - 1].fEnd.end())
              break;
            ready = it->second;
            recv = pipe[s - 1].sendSeconds;
            cause =
                formatv("waits for F{0} of stage {1}", ph.microBatch, s - 1);
          } else if (ph.backward && s + 1 < pipe.size()) {
            auto it = st[p][s + 1].bEnd.find(ph.microBatch);
            if (it == st[p][s + 1].bEnd.end())
              break;
            ready = it->second;
            recv = stage.sendSeconds;
            cause =
                formatv("waits for B{0} of stage {1}", ph.microBatch, s + 1);
          }
          // Backward sends from other stages (tied gradients) it reads.
          bool missing = false;
          if (ph.backward)
            for (size_t q = 0; q < pipe.size() && !missing; ++q)
              for (const Stage::BackwardSend &b : pipe[q].backwardSends) {
                if (b.to != int64_t(s))
                  continue;
                auto it = st[p][q].xEnd.find(ph.microBatch);
                if (it == st[p][q].xEnd.end()) {
                  missing = true;
                  break;
                }
                if (it->second > ready)
                  cause = formatv("waits for B{0} of stage {1}",
                                  ph.microBatch, q);
                ready = std::max(ready, it->second);
                recv += b.seconds;
              }
          if (missing)
            break;
          if (me.next == 0)
            cause = "warm-up: " + cause;
          double start = std::max(me.free, ready);
          gap(p, s, me.free, start, ph.name(), cause);
          auto &busy = timeline(p, s).busy;
          if (recv > 0)
            busy.push_back({start, start + recv, "recv " + ph.name()});
          start += recv;
          double end = start + (ph.backward ? stage.backward : stage.forward);
          busy.push_back({start, end, ph.name()});
          // Its tensor to the neighbour that needs it: forward to the next
          // stage, backward to the previous one; it is ready once sent.
          double send = 0;
          if (!ph.backward && s + 1 < pipe.size())
            send = stage.sendSeconds;
          else if (ph.backward && s > 0)
            send = pipe[s - 1].sendSeconds;
          // The neighbour's tensor goes first (the runtime's order), then
          // the backward sends, which are ready only when all are sent.
          double extra = 0;
          if (ph.backward)
            for (const Stage::BackwardSend &b : stage.backwardSends)
              extra += b.seconds;
          if (send + extra > 0)
            busy.push_back({end, end + send + extra, "send " + ph.name()});
          (ph.backward ? me.bEnd : me.fEnd)[ph.microBatch] = end + send;
          end += send + extra;
          if (ph.backward)
            me.xEnd[ph.microBatch] = end;
          me.held += ph.backward ? -1 : 1;
          me.free = end;
          ++me.next;
          progress = true;
        }
      }
    }
  }
  // The barrier before the reduction: the stage that finished last.
  double tEnd = 0;
  std::string last;
  for (size_t p = 0; p < problem.pipelines.size(); ++p)
    for (size_t s = 0; s < problem.pipelines[p].size(); ++s) {
      const State &me = st[p][s];
      if (me.next < problem.pipelines[p][s].order.size())
        return fail(formatv("the schedule deadlocks: stage {0} cannot run {1}",
                            stageName(int(p), int(s)),
                            problem.pipelines[p][s].order[me.next].name()));
      if (me.free > tEnd + kEps) {
        tEnd = me.free;
        last = stageName(int(p), int(s));
      }
    }
  for (size_t p = 0; p < problem.pipelines.size(); ++p)
    for (size_t s = 0; s < problem.pipelines[p].size(); ++s) {
      gap(p, s, st[p][s].free, tEnd, "reduce",
          "waits for " + last +
              " (the last to finish its backwards) before the gradient "
              "reduction");
      StageTimeline &tl = timeline(p, s);
      double t = tEnd;
      if (problem.allReduceSeconds > 0)
        tl.busy.push_back({t, t + problem.allReduceSeconds, "dp all-reduce"});
      t += problem.allReduceSeconds;
      if (problem.optimizerSeconds > 0)
        tl.busy.push_back({t, t + problem.optimizerSeconds, "optimizer"});
    }
  out.stepSeconds = tEnd + problem.allReduceSeconds + problem.optimizerSeconds;
  std::stable_sort(out.bubbles.begin(), out.bubbles.end(),
                   [](const Bubble &a, const Bubble &b) {
                     return std::tie(a.pipeline, a.stage, a.start) <
                            std::tie(b.pipeline, b.stage, b.start);
                   });
  double idle = 0;
  for (StageTimeline &tl : out.stages) {
    for (const Bubble &b : out.bubbles)
      if (b.pipeline == tl.pipeline && b.stage == tl.stage)
        tl.idleSeconds += b.seconds;
    int64_t ranks = problem.pipelines[tl.pipeline][tl.stage].ranks;
    idle += tl.idleSeconds;
    out.idleGpuSeconds += tl.idleSeconds * double(ranks);
    out.gpuSeconds += out.stepSeconds * double(ranks);
  }
  if (out.stepSeconds > 0)
    out.fraction = idle / (out.stepSeconds * double(out.stages.size()));
  return out;
}

static std::string mib(int64_t bytes) {
  return formatv("{0:f1} MiB", double(bytes) / double(1 << 20)).str();
}

void frenzy::bubbles::printSummary(const ScheduleProblem &problem,
                                   const BubbleAnalysis &a,
                                   llvm::raw_ostream &os) {
  // The plan writer numbers ranks pipeline by pipeline, stage by stage.
  int64_t firstRank = 0;
  for (const StageTimeline &tl : a.stages) {
    const Stage &stage = problem.pipelines[tl.pipeline][tl.stage];
    std::string ranks =
        stage.ranks == 1
            ? formatv("rank {0}", firstRank).str()
            : formatv("ranks {0}-{1}", firstRank, firstRank + stage.ranks - 1)
                  .str();
    firstRank += stage.ranks;
    size_t n = 0;
    double largest = 0;
    for (const Bubble &b : a.bubbles)
      if (b.pipeline == tl.pipeline && b.stage == tl.stage) {
        ++n;
        largest = std::max(largest, b.seconds);
      }
    os << formatv("  {0} ({1} x{2}, {8}): idle {3:f3} ms of {4:f3} ms "
                  "({5:f2}%) in {6} bubble(s), largest {7:f3} ms\n",
                  stageName(tl.pipeline, tl.stage), stage.gpu, stage.ranks,
                  tl.idleSeconds * 1e3, a.stepSeconds * 1e3,
                  a.stepSeconds > 0 ? 100 * tl.idleSeconds / a.stepSeconds : 0,
                  n, largest * 1e3, ranks);
  }
  os << formatv("  total: {0} bubble(s), bubble fraction {1:f9}; idle "
                "{2:f3} GPU-ms of {3:f3} GPU-ms\n",
                a.bubbles.size(), a.fraction, a.idleGpuSeconds * 1e3,
                a.gpuSeconds * 1e3);
}

void frenzy::bubbles::print(const ScheduleProblem &problem,
                            const BubbleAnalysis &a, llvm::raw_ostream &os) {
  size_t stages = 0;
  for (const auto &p : problem.pipelines)
    stages += p.size();
  os << formatv("bubbles: {0}, {1} pipeline(s), {2} stage(s), step {3:f3} "
                "ms\n",
                problem.kind, problem.pipelines.size(), stages,
                a.stepSeconds * 1e3);
  for (const Bubble &b : a.bubbles)
    os << formatv("  {0}: at {1:f3} ms for {2:f3} ms before {3}, {4} "
                  "micro-batch(es) held, {5} free: {6}\n",
                  stageName(b.pipeline, b.stage), b.start * 1e3,
                  b.seconds * 1e3, b.before, b.inFlight, mib(b.freeBytes),
                  b.cause);
  os << "per stage:\n";
  printSummary(problem, a, os);
}

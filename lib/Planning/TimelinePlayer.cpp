//===- TimelinePlayer.cpp - a plan's predicted steps played in time order -===//
#include "TimelinePlayer.h"

#include "frenzy/Cluster/DeviceProfile.h"

#include <algorithm>
#include <map>
#include <set>

using namespace frenzy;
using namespace frenzy::timeline;

namespace {

class Player {
public:
  Player(std::vector<std::vector<Op>> ops, const std::vector<PlayerRank> &r)
      : rankOps(std::move(ops)), ranks(r) {}

  PredictedTimeline run() {
    repeatSteps();
    play();
    return std::move(out);
  }

private:
  /// Steps overlap: nothing waits for every rank between two steps, so a
  /// rank that ends its step early starts the next one while the others
  /// finish theirs (and, on a shared core, takes the core from them). The
  /// steady state is what a run's median step measures: every rank's
  /// stream is played kSteps times; steps kFirstShown..kLastShown (after
  /// the cold start, before the last, which no next step disturbs as in a
  /// run) are the trace, and a rank's step is its mean over them. Ranks
  /// sharing cores take turns in patterns that repeat every 2 or 3 steps
  /// (a rank's steps alternate 11 and 7 ms), so one step is not the
  /// period; the mean over twelve steps is (edges aside: bench/
  /// trace_compare.py takes the same mean of the measured steps).
  static constexpr int kSteps = 15, kFirstShown = 2, kLastShown = kSteps - 2;
  static bool shown(int step) {
    return step >= kFirstShown && step <= kLastShown;
  }
  void repeatSteps() {
    for (std::vector<Op> &ops : rankOps) {
      size_t n = ops.size();
      for (int k = 1; k < kSteps; ++k)
        for (size_t i = 0; i < n; ++i) {
          Op o = ops[i];
          o.step = k;
          if (!o.key.empty())
            o.key += "@" + std::to_string(k);
          ops.push_back(std::move(o));
        }
    }
  }

  void slice(int rank, const Op &o, double start, double seconds) {
    if (!shown(o.step))
      return;
    plan::TraceEvent e;
    e.pid = rank;
    e.tid = o.kind == Op::Compute ? plan::kComputeThread : plan::kCommThread;
    e.name = o.name;
    e.cat = o.cat;
    e.startUs = start * 1e6;
    e.durUs = seconds * 1e6;
    e.args = o.args;
    if (o.cat == "side-task") {
      e.tid = kBubbleThread;
      e.durUs = o.slot * 1e6;
    }
    out.events.push_back(std::move(e));
  }


  void wait(int rank, const Op &o, double from, double to) {
    if (to - from <= 1e-9 || !shown(o.step) || o.waitName.empty())
      return;
    const std::string &name = o.waitName;
    plan::TraceEvent e;
    e.pid = rank;
    e.tid = plan::kCommThread;
    e.name = name;
    e.cat = "wait";
    e.startUs = from * 1e6;
    e.durUs = (to - from) * 1e6;
    out.events.push_back(std::move(e));
  }

  /// Plays the ranks in time order. A rank runs while it can: its compute,
  /// sends, and receives and collectives whose inputs are there. A rank
  /// whose message is not there yet waits. Where ranks share a core, the
  /// waiting one gives it up (a short wait for its sends excepted) and a
  /// rank whose wait is over queues for its core: first ready first, ties
  /// to the lower rank; it keeps the core until it waits again. This is
  /// the rule frenzy-launch's ranks follow (runtime/dist/CoreTurns.h).
  void play() {
    size_t R = rankOps.size();
    std::vector<std::string> coreOf;
    for (const PlayerRank &k : ranks)
      coreOf.push_back(k.core);
    std::map<std::string, int> freeCores;
    for (const std::string &c : coreOf)
      freeCores[c] = c.empty() ? 1 << 30 : 1;
    enum State { Runnable, Queued, Running, Blocked, Done };
    std::vector<State> state(R, Runnable);
    std::vector<bool> holds(R, false);
    std::vector<size_t> next(R, 0);
    std::vector<double> endAt(R, 0), since(R, 0), opStart(R, 0);
    std::vector<double> queuedAt(R, 0);
    std::vector<bool> lastIn(R, false); // summed a node sum, then queued
    std::vector<double> spinUntil(R, 0), opStartOverride(R, -1);
    // Cold turns: the ranks of its node that computed since a rank last
    // held a core evicted its state; its first kernel after it gets one
    // back pays for reading it again (DeviceProfile::coldTurnSeconds).
    std::vector<std::set<size_t>> ranSince(R);
    std::vector<double> cold(R, 0);
    // Per rank, the ranks of its node that share cores (whose caches its
    // compute evicts): found once, not scanned at every compute op.
    std::vector<std::vector<size_t>> sharersOnNode(R);
    {
      std::map<std::string, std::vector<size_t>> sharers;
      for (size_t r = 0; r < R; ++r)
        if (!coreOf[r].empty())
          sharers[ranks[r].node].push_back(r);
      for (size_t q = 0; q < R; ++q)
        if (auto it = sharers.find(ranks[q].node); it != sharers.end())
          for (size_t r : it->second)
            if (r != q)
              sharersOnNode[q].push_back(r);
    }
    auto computes = [&](size_t q, const Op &o, double &end) {
      if (o.kind != Op::Compute)
        return;
      end += cold[q];
      cold[q] = 0;
      for (size_t r : sharersOnNode[q])
        ranSince[r].insert(q);
    };
    auto turnStarts = [&](size_t r) {
      if (coreOf[r].empty())
        return;
      double evicted = 0;
      for (size_t q : ranSince[r])
        evicted += ranks[q].peakBytes;
      ranSince[r].clear();
      if (ranks[r].profile)
        cold[r] += ranks[r].profile->coldTurnSeconds(evicted,
                                                     ranks[r].stateBytes);
    };
    // Each rank's start of every step (and the end of its last).
    std::vector<std::vector<double>> stepStart(
        R, std::vector<double>(kSteps + 1, 0));
    std::map<std::string, double> sent;                   // key -> ready
    std::map<std::string, std::map<int, double>> arrived; // collective
    double t = 0;
    // When each shared core was last given up (it idles until taken).
    std::map<std::string, double> freeSince;
    auto release = [&](size_t r) {
      if (holds[r]) {
        ++freeCores[coreOf[r]];
        freeSince[coreOf[r]] = t;
      }
      holds[r] = false;
    };
    for (;;) {
      // Every rank that is not running decides what it can do now.
      bool changed = true;
      while (changed) {
        changed = false;
        for (size_t r = 0; r < R; ++r) {
          if (state[r] == Running || state[r] == Done || state[r] == Queued)
            continue;
          if (next[r] == rankOps[r].size()) {
            release(r);
            state[r] = Done;
            changed = true;
            continue;
          }
          const Op &o = rankOps[r][next[r]];
          bool ready = true;
          if (o.kind == Op::Recv) {
            auto it = sent.find(o.key);
            ready = it != sent.end() && it->second <= t + 1e-12;
          } else if (o.kind == Op::Collective) {
            auto &who = arrived[o.key];
            who.emplace(int(r), t);
            ready = int(who.size()) >= o.members;
            // The last member's arrival: the members that wait for it
            // (earlier in this pass) can go on now, not at the next event.
            if (ready && readyAt.emplace(o.key, t).second)
              changed = true;
          }
          if (!ready) {
            if (state[r] != Blocked) {
              // A short wait for its sends keeps the core (spinUntil);
              // then, or for any other wait, the core is given up.
              spinUntil[r] = holds[r] && !coreOf[r].empty() ? t + o.spin : t;
              if (spinUntil[r] <= t)
                release(r);
              state[r] = Blocked;
              since[r] = t;
            } else if (holds[r] && t >= spinUntil[r] - 1e-12) {
              release(r);
              changed = true;
            }
            continue;
          }
          if (state[r] == Blocked) {
            changed = true;
            if (holds[r]) // it spun and kept its core: no wait slice
              opStartOverride[r] = since[r];
          }
          if (holds[r] && o.kind == Op::Collective && o.nodeSum) {
            // The last to arrive at a shared-memory sum sums, then gives
            // its core up and queues by its arrival like the others
            // (NodeAllReduce): inside the all-reduce, not waiting.
            release(r);
            since[r] = t;
            lastIn[r] = true;
          }
          if (!holds[r]) {
            // Its wait is over: it queues for its core, and a freed core
            // goes to the rank whose wait ended first, ties to the lower
            // rank (runtime/dist/CoreTurns.h). Members of a shared-memory
            // sum all end theirs when the sum is done.
            double readyTime = t;
            if (o.kind == Op::Recv)
              readyTime = std::min(t, sent[o.key]);
            else if (o.kind == Op::Collective && readyAt.count(o.key))
              readyTime = readyAt[o.key] + (o.nodeSum ? o.latency : 0);
            if (state[r] != Blocked)
              since[r] = t;
            state[r] = Queued;
            queuedAt[r] = readyTime + 1e-15 * double(r);
            continue;
          }
          state[r] = Running; // holds its core: starts at once
          opStart[r] = t;
          if (opStartOverride[r] >= 0)
            opStart[r] = opStartOverride[r];
          opStartOverride[r] = -1;
          endAt[r] = t + o.seconds;
          if (o.kind == Op::Collective && readyAt.count(o.key))
            endAt[r] = std::max(t, readyAt[o.key] + o.latency) + o.seconds;
          computes(r, o, endAt[r]);
        }
      }
      // Free cores go to the queued ranks, first ready first: only once
      // every rank has seen this instant (ranks leaving one collective
      // all queue before any takes a core).
      std::vector<size_t> queue;
      for (size_t r = 0; r < R; ++r)
        if (state[r] == Queued)
          queue.push_back(r);
      std::sort(queue.begin(), queue.end(), [&](size_t a, size_t b) {
        return queuedAt[a] < queuedAt[b];
      });
      for (size_t r : queue) {
        int &f = freeCores[coreOf[r]];
        if (f == 0)
          continue;
        --f;
        // A rank that slept through its wait wakes slowly on a core that
        // idled meanwhile (the profile's idle_wake): a shared core free
        // before now, or a core of its own after a shared-memory sum (the
        // runtime's other waits on such a core spin).
        const Op &waited = rankOps[r][next[r]];
        bool idled = coreOf[r].empty()
                         ? waited.kind == Op::Collective && waited.nodeSum &&
                               t - since[r] > 1e-12
                         : freeSince.count(coreOf[r]) &&
                               freeSince[coreOf[r]] < t - 1e-12;
        double wake =
            idled && ranks[r].profile ? ranks[r].profile->idleWake : 0;
        holds[r] = true;
        turnStarts(r);
        const Op &o = rankOps[r][next[r]];
        opStart[r] = t;
        if (o.kind != Op::Compute && t - since[r] > 1e-12) {
          // A collective is done for a member once all arrived and it has
          // its core again; until then it is inside the MPI call (as the
          // runtime's trace shows it): the wait ends at the last arrival.
          double until = t;
          if (o.kind == Op::Collective && readyAt.count(o.key))
            until = std::max(since[r],
                             std::min(t, readyAt[o.key] + o.latency));
          if (lastIn[r])
            until = since[r];
          lastIn[r] = false;
          wait(int(r), o, since[r], until);
          opStart[r] = o.waitName.empty() && o.kind == Op::Recv ? since[r]
                                                                 : until;
        }
        state[r] = Running;
        endAt[r] = t + o.seconds;
        if (o.kind == Op::Collective && readyAt.count(o.key))
          endAt[r] = std::max(t, readyAt[o.key] + o.latency) + o.seconds;
        endAt[r] += wake;
        computes(r, o, endAt[r]);
      }
      // The next event: an op ends, or a message that is on its way lands.
      double tNext = 1e300;
      for (size_t r = 0; r < R; ++r) {
        if (state[r] == Running)
          tNext = std::min(tNext, endAt[r]);
        if (state[r] == Blocked && holds[r] && spinUntil[r] > t + 1e-12)
          tNext = std::min(tNext, spinUntil[r]);
      }
      for (auto &[key, at] : sent)
        if (at > t + 1e-12)
          tNext = std::min(tNext, at);
      if (tNext == 1e300)
        break; // all done (or a plan that cannot finish: stop)
      t = tNext;
      for (size_t r = 0; r < R; ++r) {
        if (state[r] != Running || endAt[r] > t + 1e-12)
          continue;
        const Op &o = rankOps[r][next[r]];
        slice(int(r), o, opStart[r], t - opStart[r]);
        if (o.kind == Op::Send)
          sent[o.key] = t;
        size_t perStep = rankOps[r].size() / kSteps;
        if (perStep && ++next[r] % perStep == 0)
          stepStart[r][next[r] / perStep] = t;
        since[r] = t;
        state[r] = Runnable;
      }
    }
    // The steps shown, from the earliest rank's start of the first.
    double base = 1e300;
    for (size_t r = 0; r < R; ++r)
      base = std::min(base, stepStart[r][kFirstShown]);
    for (plan::TraceEvent &e : out.events)
      e.startUs -= base * 1e6;
    out.rankSeconds.assign(R, 0);
    for (size_t r = 0; r < R; ++r) {
      std::vector<double> d;
      for (int k = kFirstShown; k <= kLastShown; ++k) {
        d.push_back(stepStart[r][k + 1] - stepStart[r][k]);
        Op step;
        step.name = "step";
        step.cat = "step";
        step.step = k;
        step.args = {{"step", double(k - kFirstShown + 1)}};
        slice(int(r), step, stepStart[r][k] - base, d.back());
      }
      out.rankSeconds[r] = (stepStart[r][kLastShown + 1] -
                            stepStart[r][kFirstShown]) /
                           double(kLastShown - kFirstShown + 1);
      out.stepSeconds = std::max(out.stepSeconds, out.rankSeconds[r]);
    }
    std::vector<double> from(R), to(R);
    for (size_t r = 0; r < R; ++r) {
      from[r] = stepStart[r][kFirstShown] - base;
      to[r] = stepStart[r][kLastShown + 1] - base;
    }
    addBubbleSlices(out, from, to);
  }

  std::vector<std::vector<Op>> rankOps;
  const std::vector<PlayerRank> &ranks;
  std::map<std::string, double> readyAt; // collective -> last arrival
  PredictedTimeline out;
};

} // namespace

PredictedTimeline timeline::play(std::vector<std::vector<Op>> oneStep,
                                 const std::vector<PlayerRank> &ranks) {
  return Player(std::move(oneStep), ranks).run();
}

//===- StreamOrderTest.cpp - CUDA streams and events of a rank's stream ---===//
#include "StreamOrder.h"

#include <gtest/gtest.h>

#include <set>

using namespace frenzy;
using namespace frenzy::rt::cuda;
using plan::Action;

namespace {

/// A rank stream from the compact text of test/lib/print_schedule.py:
/// F0 B0 (forward/backward of a micro-batch), >T@P / <T@P (send/receive
/// tensor T to/from rank P, of the micro-batch of the next or last compute
/// action as the schedule pass writes them: given explicitly as >T@P:m),
/// R, U, Y.
plan::Rank parse(const std::string &text) {
  plan::Rank r;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos)
      j = text.size();
    std::string tok = text.substr(i, j - i);
    i = j + 1;
    if (tok.empty())
      continue;
    Action *a = r.add_stream();
    char c = tok[0];
    if (c == 'F' || c == 'B') {
      a->set_kind(c == 'F' ? Action::FORWARD : Action::BACKWARD);
      a->set_micro_batch(std::stoi(tok.substr(1)));
    } else if (c == '>' || c == '<') {
      a->set_kind(c == '>' ? Action::SEND : Action::RECV);
      size_t at = tok.find('@'), colon = tok.find(':');
      a->set_tensor(std::stoi(tok.substr(1, at - 1)));
      a->set_peer(std::stoi(tok.substr(at + 1, colon - at - 1)));
      a->set_micro_batch(std::stoi(tok.substr(colon + 1)));
    } else if (c == 'R') {
      a->set_kind(Action::REDUCE_GRADS);
    } else if (c == 'U') {
      a->set_kind(Action::UPDATE);
    } else {
      a->set_kind(Action::SYNC_PARAMS);
    }
  }
  return r;
}

// Tensors 120 (the head's part of the tied embedding gradient) and 9 (a
// parameter) are one buffer per step; 71 and 174 are per micro-batch.
bool sharedTensor(int32_t t) { return t == 120 || t == 9; }

// docs/runtime.md's 1F1B example, ranks 0 and 1 of a 2-stage pipeline.
const char *kRank0 = "F0 >71@1:0 F1 >71@1:1 <174@1:0 <120@1:0 B0 F2 >71@1:2 "
                     "<174@1:1 <120@1:1 B1 <174@1:2 <120@1:2 B2 R U >9@1:0";
const char *kRank1 = "<71@0:0 F0 B0 >174@0:0 >120@0:0 <71@0:1 F1 B1 "
                     ">174@0:1 >120@0:1 <71@0:2 F2 B2 >174@0:2 >120@0:2 R U "
                     "<9@0:0";

TEST(StreamOrder, FirstStageOfA1F1BPipeline) {
  plan::Rank r = parse(kRank0);
  StreamOrder o = orderStreams(r, sharedTensor);
  EXPECT_EQ(o.describe(r),
            "0:F@0[compute] | 1:>71@0[send:1] waits 0 free-after | "
            "2:F@1[compute] | 3:>71@1[send:1] waits 2 free-after | "
            "4:<174@0[recv:1] | 5:<120@0[recv:1] waits 2 | "
            "6:B@0[compute] waits 4 5 | 7:F@2[compute] | "
            "8:>71@2[send:1] waits 7 free-after | 9:<174@1[recv:1] | "
            "10:<120@1[recv:1] waits 7 | 11:B@1[compute] waits 9 10 | "
            "12:<174@2[recv:1] | 13:<120@2[recv:1] waits 11 | "
            "14:B@2[compute] waits 12 13 | 15:R[reduce] waits 14 | "
            "16:U[compute] waits 15 | 17:>9@0[send:1] waits 16");
  // Events are recorded exactly where another stream waits (and after a
  // send whose buffer is freed after it).
  std::set<int> recorded;
  for (const OrderedAction &a : o.actions)
    if (a.recordsEvent)
      recorded.insert(a.action);
  EXPECT_EQ(recorded, (std::set<int>{0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12,
                                     13, 14, 15, 16}));
  ASSERT_EQ(o.streams.size(), 4u);
  EXPECT_EQ(o.streams[1], "send:1");
  EXPECT_EQ(o.streams[2], "recv:1");
  EXPECT_EQ(o.streams[3], "reduce");
}

TEST(StreamOrder, SecondStageWaitsForItsReceivesAndSharedSends) {
  plan::Rank r = parse(kRank1);
  StreamOrder o = orderStreams(r, sharedTensor);
  const auto &a = o.actions;
  EXPECT_EQ(a[1].waits, std::vector<int>{0});   // F0 after <71 of mb 0
  EXPECT_TRUE(a[2].waits.empty());              // B0: F0 is on its stream
  EXPECT_EQ(a[3].waits, std::vector<int>{2});   // >174 of mb 0 after B0
  EXPECT_TRUE(a[3].releaseAfter);               // per micro-batch
  EXPECT_FALSE(a[4].releaseAfter);              // 120 is shared
  EXPECT_EQ(a[6].waits, std::vector<int>{5});   // F1 after <71 of mb 1 only
  // B1 overwrites gradient 120, which >120 of mb 0 may still be sending.
  EXPECT_EQ(a[7].waits, std::vector<int>{4});
  EXPECT_EQ(a[17].waits, std::vector<int>{16}); // <9 (shared) after U
}

TEST(StreamOrder, NoActionWaitsForItsOwnStream) {
  for (const char *text : {kRank0, kRank1}) {
    plan::Rank r = parse(text);
    StreamOrder o = orderStreams(r, sharedTensor);
    for (const OrderedAction &a : o.actions)
      for (int w : a.waits) {
        EXPECT_NE(o.actions[w].stream, a.stream) << a.action;
        EXPECT_LT(w, a.action); // only earlier actions
      }
  }
}

TEST(StreamOrder, OneRankStreamNeedsNoEvents) {
  plan::Rank r = parse("F0 B0 F1 B1 R U");
  StreamOrder o = orderStreams(r, sharedTensor);
  EXPECT_EQ(o.describe(r), "0:F@0[compute] | 1:B@0[compute] | 2:F@1[compute] "
                           "| 3:B@1[compute] | 4:R[reduce] waits 3 | "
                           "5:U[compute] waits 4");
}

} // namespace

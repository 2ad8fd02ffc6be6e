//===- StagePrograms.cpp - the partition written into plan.bin ------------===//
//
// The plan's program is the whole training step at the micro-batch size;
// each stage names the instructions of its blocks, and the tensors that
// cross stage boundaries (what it receives, what it sends). Instructions
// tied to no block (the global gradient-norm reduction) are listed in every
// stage: the multi-rank runtime reduces them across stages.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Planning/StagePrograms.h"

#include "frenzy/Dialect/Frenzy/IR/FrenzyOps.h"
#include "plan.pb.h"

#include <set>

using namespace frenzy;

static bool owns(const Stage &st, const plan::Instr &in) {
  if (!in.has_block())
    return true;
  int64_t b = in.block();
  if (b == BlockAttr::kEmbed)
    return st.embed;
  if (b == BlockAttr::kHead)
    return st.head;
  return b >= st.firstLayer && b <= st.lastLayer;
}

void frenzy::addStagePrograms(const PartitionPlan &pp,
                              const ClusterSpec &cluster,
                              const PartitionOptions &o, plan::Plan &out) {
  const plan::Program &prog = out.program();
  // Which instruction produces each tensor.
  std::vector<int> producer(prog.tensors_size(), -1);
  for (int i = 0; i < prog.instrs_size(); ++i)
    for (int32_t t : prog.instrs(i).outputs())
      producer[t] = i;

  out.set_micro_batch(pp.microBatch);
  out.set_global_batch(o.globalBatch);
  out.set_predicted_step_seconds(pp.stepSeconds());
  out.clear_devices();
  int32_t rankId = 0;
  for (size_t p = 0; p < pp.pipelines.size(); ++p) {
    const Pipeline &pipe = pp.pipelines[p];
    for (size_t s = 0; s < pipe.stages.size(); ++s) {
      const Stage &st = pipe.stages[s];
      const ClusterNode &node = cluster.nodes[st.node];
      plan::StageProgram *sp = out.add_stages();
      sp->set_pipeline(int32_t(p));
      sp->set_stage(int32_t(s));
      sp->set_first_layer(st.firstLayer);
      sp->set_last_layer(st.lastLayer);
      sp->set_embed(st.embed);
      sp->set_head(st.head);
      sp->set_micro_batches(pipe.microBatches);
      sp->set_predicted_seconds(st.seconds);
      for (size_t i = 0; i < st.devices.size(); ++i) {
        plan::Rank *r = out.add_ranks();
        r->set_id(rankId);
        r->set_node(node.name);
        r->set_gpu_type(node.gpu);
        r->set_device(int32_t(st.devices[i]));
        r->set_pipeline(int32_t(p));
        r->set_stage(int32_t(s));
        r->set_tp_rank(int32_t(i));
        r->set_predicted_peak_bytes(st.peakBytes);
        sp->add_ranks(rankId++);
        plan::Device *d = out.add_devices();
        d->set_node(node.name);
        d->set_gpu_type(node.gpu);
        d->set_index(int32_t(st.devices[i]));
      }
      std::set<int> mine;
      for (int i = 0; i < prog.instrs_size(); ++i)
        if (owns(st, prog.instrs(i))) {
          mine.insert(i);
          sp->add_instrs(i);
        }
      std::set<int32_t> recv, send;
      for (int i : mine) {
        for (int32_t t : prog.instrs(i).inputs())
          if (producer[t] >= 0 && !mine.count(producer[t]))
            recv.insert(t);
      }
      for (int i = 0; i < prog.instrs_size(); ++i) {
        if (mine.count(i))
          continue;
        for (int32_t t : prog.instrs(i).inputs())
          if (producer[t] >= 0 && mine.count(producer[t]) &&
              prog.instrs(producer[t]).has_block())
            send.insert(t);
      }
      for (int32_t t : recv)
        sp->add_recv_tensors(t);
      for (int32_t t : send)
        sp->add_send_tensors(t);
    }
  }
}

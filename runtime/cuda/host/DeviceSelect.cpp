//===- DeviceSelect.cpp - which GPU a rank uses, and the checks -----------===//
#include "DeviceSelect.h"

#include "Tensor.h"

#include <algorithm>
#include <cctype>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

std::string upper(std::string s) {
  for (char &c : s)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

/// `word` occurs in `s` not as part of a longer alphanumeric token ("L4"
/// in "NVIDIA L4" but not in "NVIDIA L40S").
bool hasWord(const std::string &s, const std::string &word) {
  for (size_t at = s.find(word); at != std::string::npos;
       at = s.find(word, at + 1)) {
    bool left = at == 0 || !std::isalnum(static_cast<unsigned char>(s[at - 1]));
    size_t end = at + word.size();
    bool right =
        end >= s.size() || !std::isalnum(static_cast<unsigned char>(s[end]));
    if (left && right)
      return true;
  }
  return false;
}

bool has(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

constexpr int64_t kGiB = int64_t(1) << 30;

std::string nodeOf(const plan::Rank &r) {
  return r.node().empty() ? std::string("?") : r.node();
}

} // namespace

std::string frenzy::rt::cuda::catalogueType(const GpuInfo &g) {
  std::string n = upper(g.name);
  double gib = double(g.totalBytes) / double(kGiB);
  if (has(n, "H100"))
    return has(n, "PCIE") ? "H100-PCIe" : "H100-SXM";
  if (has(n, "A100"))
    return gib > 48 ? "A100-80G" : "A100-40G";
  if (has(n, "V100"))
    return gib > 20 ? "V100-32G" : "V100-16G";
  if (has(n, "A6000"))
    return "RTX-A6000";
  if (has(n, "3090"))
    return "RTX3090";
  if (has(n, "4090"))
    return "RTX4090";
  if (hasWord(n, "L4"))
    return "L4";
  if (hasWord(n, "T4"))
    return "T4";
  return "";
}

DeviceChoice frenzy::rt::cuda::chooseDevice(const plan::Plan &plan, int rank,
                                            const std::vector<GpuInfo> &visible,
                                            const std::string &probeError,
                                            bool shareGpus) {
  if (rank < 0 || rank >= std::max(plan.ranks_size(), 1))
    throw RuntimeError("rank " + std::to_string(rank) +
                       ": the plan has no such rank");
  plan::Rank me;
  if (plan.ranks_size())
    me = plan.ranks(rank);
  else if (plan.devices_size()) { // a one-device plan lists only devices
    me.set_node(plan.devices(0).node());
    me.set_gpu_type(plan.devices(0).gpu_type());
    me.set_device(plan.devices(0).index());
  }
  std::string who = "rank " + std::to_string(rank) + " (node " + nodeOf(me) +
                    ", device " + std::to_string(me.device()) + ")";
  if (visible.empty())
    throw RuntimeError(who + ": no CUDA GPU is visible" +
                       (probeError.empty() ? "" : " (" + probeError + ")") +
                       "; run this rank on a GPU node or pass --backend=cpu");
  // Every rank of the node must fit: all ranks then refuse alike.
  int onNode = 0, maxDevice = me.device();
  for (const plan::Rank &r : plan.ranks())
    if (r.node() == me.node() && r.gpu_type() != "cpu") {
      ++onNode;
      maxDevice = std::max(maxDevice, r.device());
    }
  onNode = std::max(onNode, 1);
  DeviceChoice c;
  c.device = me.device();
  int count = int(visible.size());
  if (maxDevice >= count) {
    if (!shareGpus)
      throw RuntimeError(
          who + ": the plan puts " + std::to_string(onNode) +
          " GPU rank(s) on node " + nodeOf(me) + " (device indices up to " +
          std::to_string(maxDevice) + ") but this machine shows " +
          std::to_string(count) + " GPU(s); run on a node with " +
          std::to_string(maxDevice + 1) +
          " GPUs, set CUDA_VISIBLE_DEVICES to show them, or pass "
          "--share-gpus (tests only: several ranks per GPU)");
    c.device = me.device() % count;
    c.notes += who + ": sharing GPU " + std::to_string(c.device) + " of " +
               std::to_string(count) + " (--share-gpus)\n";
  }
  const GpuInfo &g = visible[c.device];
  std::string found = catalogueType(g);
  const std::string &want = me.gpu_type();
  if (want != "cpu" && !want.empty()) {
    if (found.empty())
      c.notes += who + ": cannot tell whether '" + g.name +
                 "' is the plan's " + want + "; going on\n";
    else if (upper(found) != upper(want))
      throw RuntimeError(who + ": the plan was made for a " + want +
                         ", but this GPU is a '" + g.name + "' (" + found +
                         "); re-plan with a cluster file that names " + found +
                         " for this node, or run where the plan's GPUs are");
  }
  if (g.major < 8)
    throw RuntimeError(who + ": '" + g.name + "' has compute capability " +
                       std::to_string(g.major) + "." +
                       std::to_string(g.minor) +
                       "; the CUDA kernels are built for sm_80 and sm_90 "
                       "(Ampere or newer); use --backend=cpu on this node");
  return c;
}

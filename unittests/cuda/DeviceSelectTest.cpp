//===- DeviceSelectTest.cpp - device choice and backend selection ---------===//
#include "BackendChoice.h"
#include "DeviceSelect.h"
#include "Tensor.h"

#include <gtest/gtest.h>

using namespace frenzy;
using namespace frenzy::rt;
using namespace frenzy::rt::cuda;

namespace {

constexpr int64_t GiB = int64_t(1) << 30;

GpuInfo gpu(const char *name, int64_t gib, int major) {
  return {name, gib * GiB, major, 0, ""};
}

const GpuInfo kH100 = gpu("NVIDIA H100 80GB HBM3", 79, 9);
const GpuInfo kA100 = gpu("NVIDIA A100-SXM4-80GB", 79, 8);

/// `n` ranks on node n0, devices 0..n-1, of one GPU type.
plan::Plan ranksOn(int n, const char *type) {
  plan::Plan p;
  for (int i = 0; i < n; ++i) {
    plan::Rank *r = p.add_ranks();
    r->set_id(i);
    r->set_node("n0");
    r->set_device(i);
    r->set_gpu_type(type);
  }
  return p;
}

std::string errorOf(const plan::Plan &p, int rank,
                    const std::vector<GpuInfo> &gpus, bool share = false) {
  try {
    chooseDevice(p, rank, gpus, "no CUDA driver", share);
  } catch (const RuntimeError &e) {
    std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos);
    return m;
  }
  return "";
}

TEST(DeviceSelect, KnowsTheCatalogueGpus) {
  EXPECT_EQ(catalogueType(kH100), "H100-SXM");
  EXPECT_EQ(catalogueType(gpu("NVIDIA H100 PCIe", 79, 9)), "H100-PCIe");
  EXPECT_EQ(catalogueType(kA100), "A100-80G");
  EXPECT_EQ(catalogueType(gpu("NVIDIA A100-SXM4-40GB", 39, 8)), "A100-40G");
  EXPECT_EQ(catalogueType(gpu("Tesla V100-SXM2-16GB", 16, 7)), "V100-16G");
  EXPECT_EQ(catalogueType(gpu("NVIDIA GeForce RTX 3090", 24, 8)), "RTX3090");
  EXPECT_EQ(catalogueType(gpu("NVIDIA RTX A6000", 48, 8)), "RTX-A6000");
  EXPECT_EQ(catalogueType(gpu("NVIDIA L4", 22, 8)), "L4");
  EXPECT_EQ(catalogueType(gpu("NVIDIA L40S", 45, 8)), "");
  EXPECT_EQ(catalogueType(gpu("Tesla T4", 15, 7)), "T4");
}

TEST(DeviceSelect, RankUsesItsPlanDevice) {
  plan::Plan p = ranksOn(2, "H100-SXM");
  DeviceChoice c = chooseDevice(p, 1, {kH100, kH100}, "", false);
  EXPECT_EQ(c.device, 1);
  EXPECT_EQ(c.notes, "");
}

TEST(DeviceSelect, NoGpu) {
  EXPECT_EQ(errorOf(ranksOn(1, "H100-SXM"), 0, {}),
            "rank 0 (node n0, device 0): no CUDA GPU is visible (no CUDA "
            "driver); run this rank on a GPU node or pass --backend=cpu");
}

TEST(DeviceSelect, FewerGpusThanRanksOnTheNode) {
  plan::Plan p = ranksOn(4, "H100-SXM");
  // Rank 0 fits on its own but refuses too: the node cannot run the plan.
  EXPECT_EQ(errorOf(p, 0, {kH100, kH100}),
            "rank 0 (node n0, device 0): the plan puts 4 GPU rank(s) on node "
            "n0 (device indices up to 3) but this machine shows 2 GPU(s); "
            "run on a node with 4 GPUs, set CUDA_VISIBLE_DEVICES to show "
            "them, or pass --share-gpus (tests only: several ranks per GPU)");
  DeviceChoice c = chooseDevice(p, 3, {kH100, kH100}, "", true);
  EXPECT_EQ(c.device, 1);
  EXPECT_EQ(c.notes, "rank 3 (node n0, device 3): sharing GPU 1 of 2 "
                     "(--share-gpus)\n");
}

TEST(DeviceSelect, OtherGpuTypeThanThePlans) {
  EXPECT_EQ(errorOf(ranksOn(1, "A100-80G"), 0, {kH100}),
            "rank 0 (node n0, device 0): the plan was made for a A100-80G, "
            "but this GPU is a 'NVIDIA H100 80GB HBM3' (H100-SXM); re-plan "
            "with a cluster file that names H100-SXM for this node, or run "
            "where the plan's GPUs are");
  // Catalogue names compare without case; an unknown GPU is a note.
  EXPECT_EQ(chooseDevice(ranksOn(1, "a100-80g"), 0, {kA100}, "", false).device,
            0);
  DeviceChoice c = chooseDevice(ranksOn(1, "A100-80G"), 0,
                                {gpu("NVIDIA B200", 180, 10)}, "", false);
  EXPECT_NE(c.notes.find("cannot tell whether 'NVIDIA B200' is the plan's "
                         "A100-80G"),
            std::string::npos);
}

TEST(DeviceSelect, OlderThanSm80) {
  EXPECT_NE(errorOf(ranksOn(1, "V100-16G"), 0,
                    {gpu("Tesla V100-SXM2-16GB", 16, 7)})
                .find("compute capability 7.0; the CUDA kernels are built "
                      "for sm_80 and sm_90"),
            std::string::npos);
}

TEST(Backend, DefaultFollowsThePlanAndTheMachine) {
  CudaAvailability none{true, 0, "no driver"}, one{true, 1, ""},
      notBuilt{false, 0, ""};
  EXPECT_EQ(chooseBackend("", "H100-SXM", one, 0), Backend::Cuda);
  EXPECT_EQ(chooseBackend("", "cpu", one, 0), Backend::Cpu);
  // A GPU plan on a machine without a GPU (or a CPU-only build): CPU.
  EXPECT_EQ(chooseBackend("", "H100-SXM", none, 0), Backend::Cpu);
  EXPECT_EQ(chooseBackend("", "H100-SXM", notBuilt, 0), Backend::Cpu);
  EXPECT_EQ(chooseBackend("cpu", "H100-SXM", one, 0), Backend::Cpu);
  EXPECT_EQ(chooseBackend("cuda", "cpu", one, 0), Backend::Cuda);
}

TEST(Backend, ExplicitCudaThatCannotRunIsOneLine) {
  auto err = [](const std::string &flag, const CudaAvailability &c) {
    try {
      chooseBackend(flag, "H100-SXM", c, 2);
    } catch (const RuntimeError &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(err("cuda", {true, 0, "CUDA driver version is insufficient"}),
            "rank 2: --backend=cuda: no CUDA GPU is visible (CUDA driver "
            "version is insufficient); run on a GPU node or use "
            "--backend=cpu");
  EXPECT_EQ(err("cuda", {false, 0, ""}),
            "rank 2: --backend=cuda: this frenzy-launch was built without "
            "the CUDA backend (configure with -DFRENZY_CUDA=ON where the "
            "CUDA toolkit and NCCL are installed); use --backend=cpu");
  EXPECT_EQ(err("gpu", {true, 1, ""}),
            "--backend=gpu: unknown backend; use --backend=cpu or "
            "--backend=cuda");
}

} // namespace

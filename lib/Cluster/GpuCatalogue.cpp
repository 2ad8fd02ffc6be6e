//===- GpuCatalogue.cpp - GPU types Frenzy knows --------------------------===//
//
// Figures are the vendor's datasheet values: dense (no structured sparsity)
// 16-bit tensor TFLOPS with fp32 accumulation, which is what mixed-precision
// training runs at; memory in GiB as nvidia-smi reports it. The H100 SXM
// memory and every context size marked "measured" were read on a lent H100
// with bench/gpu/context_overhead.cu; the others use 512 MiB, the rounded
// H100 figure (see docs/memory.md).
//
//===----------------------------------------------------------------------===//
#include "frenzy/Cluster/GpuCatalogue.h"

#include "llvm/ADT/STLExtras.h"

using namespace frenzy;

static constexpr int64_t GiB = 1ll << 30;

static const GpuType kCatalogue[] = {
    {"V100-16G", 16 * GiB, 125, 900, false, 512ll << 20,
     "NVIDIA Tesla V100 datasheet (SXM2): 125 TFLOPS tensor, 900 GB/s"},
    {"V100-32G", 32 * GiB, 125, 900, false, 512ll << 20,
     "NVIDIA Tesla V100 datasheet (SXM2 32GB): 125 TFLOPS tensor, 900 GB/s"},
    {"A100-40G", 40 * GiB, 312, 1555, true, 512ll << 20,
     "NVIDIA A100 datasheet (SXM 40GB): 312 TFLOPS bf16 dense, 1555 GB/s"},
    {"A100-80G", 80 * GiB, 312, 2039, true, 512ll << 20,
     "NVIDIA A100 datasheet (SXM 80GB): 312 TFLOPS bf16 dense, 2039 GB/s"},
    {"H100-SXM", 85017493504, 989, 3350, true, 552402944,
     "NVIDIA H100 datasheet (SXM5): 989 TFLOPS bf16 dense, 3.35 TB/s; "
     "memory and context measured on a lent H100 80GB HBM3"},
    {"H100-PCIe", 80 * GiB, 756, 2000, true, 512ll << 20,
     "NVIDIA H100 datasheet (PCIe): 756 TFLOPS bf16 dense, 2.0 TB/s"},
    {"RTX3090", 24 * GiB, 35.6, 936, true, 512ll << 20,
     "NVIDIA Ampere GA102 whitepaper (RTX 3090): 35.6 TFLOPS fp16 tensor "
     "dense with fp32 accumulate (71 with fp16 accumulate), 936 GB/s"},
    {"RTX4090", 24 * GiB, 165, 1008, true, 512ll << 20,
     "NVIDIA Ada Lovelace whitepaper (RTX 4090): 165.2 TFLOPS fp16 tensor "
     "dense with fp32 accumulate, 1008 GB/s"},
    {"RTX-A6000", 48 * GiB, 155, 768, true, 512ll << 20,
     "NVIDIA RTX A6000 datasheet: 309.7 TFLOPS fp16 tensor with sparsity "
     "(154.8 dense), 768 GB/s"},
    {"L4", 24 * GiB, 121, 300, true, 512ll << 20,
     "NVIDIA L4 datasheet: 242 TFLOPS bf16 with sparsity (121 dense), "
     "300 GB/s"},
    {"T4", 16 * GiB, 65, 320, false, 512ll << 20,
     "NVIDIA T4 datasheet: 65 TFLOPS fp16 mixed precision, 320 GB/s"},
    // Not a GPU: one process of frenzy-launch's CPU backend (one thread).
    {"cpu", 8 * GiB, 0.035, 20, false, 0,
     "one CPU rank of Frenzy's CPU backend: 0.035 TFLOPS is the fp32 rate "
     "frenzy-launch reaches on one thread of this project's build machine "
     "(bench/train_speed.sh, docs/training.md); 8 GiB per rank nominal",
     0, 0},
};

llvm::ArrayRef<GpuType> frenzy::gpuCatalogue() { return kCatalogue; }

const GpuType *frenzy::findGpuType(llvm::StringRef name) {
  for (const GpuType &g : kCatalogue)
    if (name.equals_insensitive(g.name))
      return &g;
  return nullptr;
}

std::string frenzy::gpuTypeNames() {
  std::string s;
  for (const GpuType &g : kCatalogue)
    s += (s.empty() ? "" : ", ") + g.name;
  return s;
}

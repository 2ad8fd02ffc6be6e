//===- ImageResize.h - a batch image resize as a side task ------*- C++ -*-===//
//
// `images` generated RGB images (float, height x width x 3, deterministic
// from a seed: smooth gradients plus seeded noise, what a photo's pixels
// look like to the filter) resized to outHeight x outWidth with bilinear
// interpolation at pixel centres (half-pixel offsets, edges clamped: the
// convention of ONNX Resize's "half_pixel" and of OpenCV's INTER_LINEAR).
// One step generates an image or resizes `rowsPerStep` output rows of it; the task
// finishes when every image is done. A running checksum of the outputs is
// its progress.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_RUNTIME_SIDETASK_TASKS_IMAGERESIZE_H
#define FRENZY_RUNTIME_SIDETASK_TASKS_IMAGERESIZE_H

#include "SideTask.h"

#include <vector>

namespace frenzy::rt {

/// Bilinear resize of one image (h x w x c, row-major) into out
/// (oh x ow x c), rows [row0, row1) only.
void resizeBilinear(const float *in, int64_t h, int64_t w, int64_t c,
                    float *out, int64_t oh, int64_t ow, int64_t row0,
                    int64_t row1);
/// Image `index` of the batch generated from `seed`.
void generateImage(uint64_t seed, int64_t index, int64_t h, int64_t w,
                   float *out);

class ImageResizeTask : public SideTask {
public:
  struct Config {
    int64_t images = 64, height = 120, width = 160;
    int64_t outHeight = 90, outWidth = 120, rowsPerStep = 30;
    uint64_t seed = 1;
  };
  explicit ImageResizeTask(Config c) : cfg(c) {}
  std::string name() const override { return "resize"; }
  void init(int64_t memoryBudget) override;
  bool step() override;
  void finish() override;
  int64_t bytesInUse() const override;
  std::string progress() const override;

  /// The output of the image being (or last) resized.
  const std::vector<float> &lastOutput() const { return out; }
  int64_t imagesDone() const { return done; }
  double checksum() const { return sum; }

private:
  Config cfg;
  std::vector<float> in, out;
  int64_t done = 0, row = 0;
  bool haveInput = false;
  double sum = 0;
};

} // namespace frenzy::rt

#endif

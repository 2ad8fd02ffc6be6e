//===- ImageResize.cpp - a batch image resize as a side task --------------===//
#include "ImageResize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace frenzy::rt {

void resizeBilinear(const float *in, int64_t h, int64_t w, int64_t c,
                    float *out, int64_t oh, int64_t ow, int64_t row0,
                    int64_t row1) {
  const double sy = double(h) / double(oh), sx = double(w) / double(ow);
  for (int64_t y = row0; y < row1; ++y) {
    // Source coordinate of the output pixel's centre, clamped to the image.
    double fy = std::clamp((double(y) + 0.5) * sy - 0.5, 0.0, double(h - 1));
    int64_t y0 = int64_t(fy), y1 = std::min(y0 + 1, h - 1);
    double wy = fy - double(y0);
    for (int64_t x = 0; x < ow; ++x) {
      double fx =
          std::clamp((double(x) + 0.5) * sx - 0.5, 0.0, double(w - 1));
      int64_t x0 = int64_t(fx), x1 = std::min(x0 + 1, w - 1);
      double wx = fx - double(x0);
      for (int64_t k = 0; k < c; ++k) {
        double a = in[(y0 * w + x0) * c + k], b = in[(y0 * w + x1) * c + k];
        double d = in[(y1 * w + x0) * c + k], e = in[(y1 * w + x1) * c + k];
        double top = a + (b - a) * wx, bottom = d + (e - d) * wx;
        out[(y * ow + x) * c + k] = float(top + (bottom - top) * wy);
      }
    }
  }
}

void generateImage(uint64_t seed, int64_t index, int64_t h, int64_t w,
                   float *out) {
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + uint64_t(index) + 1;
  // Separable gradients: one sin per column and channel, one cos per row.
  std::vector<double> col(size_t(w) * 3), line(static_cast<size_t>(h));
  for (int64_t x = 0; x < w; ++x)
    for (int64_t k = 0; k < 3; ++k)
      col[size_t(x * 3 + k)] = std::sin(0.05 * double(x + 7 * index) + double(k));
  for (int64_t y = 0; y < h; ++y)
    line[size_t(y)] = std::cos(0.03 * double(y));
  for (int64_t y = 0; y < h; ++y)
    for (int64_t i = 0; i < w * 3; ++i) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      double noise = double(s >> 11) / double(1ull << 53) - 0.5;
      out[y * w * 3 + i] =
          float(0.5 + 0.3 * col[size_t(i)] * line[size_t(y)] + 0.1 * noise);
    }
}

void ImageResizeTask::init(int64_t memoryBudget) {
  if (cfg.images < 1 || cfg.height < 1 || cfg.width < 1 ||
      cfg.outHeight < 1 || cfg.outWidth < 1 || cfg.rowsPerStep < 1)
    throw std::invalid_argument("resize: every size must be >= 1");
  int64_t need = (cfg.height * cfg.width + cfg.outHeight * cfg.outWidth) *
                 3 * int64_t(sizeof(float));
  if (memoryBudget > 0 && need > memoryBudget)
    throw std::runtime_error("resize of " + std::to_string(cfg.height) + "x" +
                             std::to_string(cfg.width) + " images needs " +
                             std::to_string(need) + " bytes, over the budget "
                             "of " + std::to_string(memoryBudget));
  in.resize(size_t(cfg.height * cfg.width * 3));
  out.resize(size_t(cfg.outHeight * cfg.outWidth * 3));
}

bool ImageResizeTask::step() {
  if (done >= cfg.images)
    return false;
  if (!haveInput) { // the next image, in a step of its own
    generateImage(cfg.seed, done, cfg.height, cfg.width, in.data());
    haveInput = true;
    return true;
  }
  int64_t end = std::min(cfg.outHeight, row + cfg.rowsPerStep);
  resizeBilinear(in.data(), cfg.height, cfg.width, 3, out.data(),
                 cfg.outHeight, cfg.outWidth, row, end);
  for (int64_t i = row * cfg.outWidth * 3; i < end * cfg.outWidth * 3; ++i)
    sum += out[size_t(i)];
  row = end;
  if (row < cfg.outHeight)
    return true;
  row = 0;
  haveInput = false;
  return ++done < cfg.images;
}

void ImageResizeTask::finish() {
  in.clear();
  in.shrink_to_fit();
}

int64_t ImageResizeTask::bytesInUse() const {
  return int64_t((in.capacity() + out.capacity()) * sizeof(float));
}

std::string ImageResizeTask::progress() const {
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%lld/%lld images, checksum %.6g",
                (long long)done, (long long)cfg.images, sum);
  return buf;
}

} // namespace frenzy::rt

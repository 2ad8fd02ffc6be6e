//===- OnnxWeights.h - parameter values from the ONNX model file -*- C++ -*-===//
#ifndef FRENZY_RUNTIME_EXEC_ONNXWEIGHTS_H
#define FRENZY_RUNTIME_EXEC_ONNXWEIGHTS_H

#include "Tensor.h"

#include <memory>

namespace onnx {
class ModelProto;
class TensorProto;
} // namespace onnx

namespace frenzy::rt {

/// Reads initializers, Constant-node values and external data of one model.
class OnnxWeights {
public:
  explicit OnnxWeights(const std::string &modelPath);
  ~OnnxWeights();
  /// Fills `dst` (already shaped and allocated) with the parameter's value.
  void load(const plan::ParamSource &param, Tensor &dst);

  /// Export: replaces the parameter's value in the in-memory model (inline
  /// raw data, also for parameters that were external data), then writes
  /// the model to `out` (through a temporary file and a rename).
  void store(const plan::ParamSource &param, const void *data, int64_t bytes);
  void write(const std::string &out) const;

private:
  const onnx::TensorProto *find(const std::string &name) const;
  void readExternal(const plan::ParamSource &param, Tensor &dst);
  std::string path, dir;
  std::unique_ptr<onnx::ModelProto> model;
};

} // namespace frenzy::rt

#endif

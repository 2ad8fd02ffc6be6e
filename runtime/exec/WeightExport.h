//===- WeightExport.h - trained weights back into an ONNX file --*- C++ -*-===//
#ifndef FRENZY_RUNTIME_EXEC_WEIGHTEXPORT_H
#define FRENZY_RUNTIME_EXEC_WEIGHTEXPORT_H

#include "Executor.h"

namespace frenzy::rt {

using ParamValues = std::map<std::string, std::vector<float>>;

/// Every trainable parameter this executor holds, by name.
ParamValues heldParameters(Executor &ex);

/// Writes a copy of the plan's ONNX model whose trainable parameters have
/// `values` (all of them must be there); refuses to overwrite the model
/// itself. The graph is unchanged, so any ONNX runtime runs the result.
void exportWeights(const plan::Plan &plan, const ParamValues &values,
                   const std::string &out);

} // namespace frenzy::rt

#endif

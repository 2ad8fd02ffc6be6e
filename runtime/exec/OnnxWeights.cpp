//===- OnnxWeights.cpp - parameter values from the ONNX model file --------===//
//
// The runtime reads weights straight from the user's model (no converted
// copy): inline initializers (raw_data or typed fields), Constant nodes, and
// ONNX external data at the offset the compiler recorded.
//
//===----------------------------------------------------------------------===//
#include "OnnxWeights.h"

#include "onnx/onnx_pb.h"

#include <cstdio>
#include <cstring>
#include <fstream>

namespace frenzy::rt {

OnnxWeights::OnnxWeights(const std::string &modelPath)
    : path(modelPath), model(std::make_unique<onnx::ModelProto>()) {
  size_t slash = path.find_last_of('/');
  dir = slash == std::string::npos ? "." : path.substr(0, slash);
  std::ifstream in(path, std::ios::binary);
  if (!in || !model->ParseFromIstream(&in))
    throw RuntimeError(path + ": cannot parse the ONNX model");
}

OnnxWeights::~OnnxWeights() = default;

const onnx::TensorProto *OnnxWeights::find(const std::string &name) const {
  for (const onnx::TensorProto &t : model->graph().initializer())
    if (t.name() == name)
      return &t;
  for (const onnx::NodeProto &n : model->graph().node())
    if (n.op_type() == "Constant" && n.output_size() == 1 &&
        n.output(0) == name)
      for (const onnx::AttributeProto &a : n.attribute())
        if (a.name() == "value" && a.has_t())
          return &a.t();
  return nullptr;
}

void OnnxWeights::readExternal(const plan::ParamSource &p, Tensor &dst) {
  std::string file = dir + "/" + p.file();
  std::ifstream in(file, std::ios::binary);
  int64_t length = p.length() ? p.length() : dst.bytes();
  if (length != dst.bytes())
    throw RuntimeError(file + ": parameter '" + p.name() + "' has " +
                       std::to_string(length) + " bytes, expected " +
                       std::to_string(dst.bytes()));
  if (!in.seekg(p.offset()) ||
      !in.read(static_cast<char *>(dst.data()), length))
    throw RuntimeError(file + ": cannot read " + std::to_string(length) +
                       " bytes at offset " + std::to_string(p.offset()) +
                       " for parameter '" + p.name() + "'");
}

void OnnxWeights::load(const plan::ParamSource &p, Tensor &dst) {
  if (p.storage() == "external")
    return readExternal(p, dst);
  const std::string &name = p.value_from().empty() ? p.name() : p.value_from();
  const onnx::TensorProto *t = find(name);
  if (!t)
    throw RuntimeError(path + ": no initializer or constant named '" + name +
                       "' (parameter '" + p.name() + "')");
  std::string where = path + ": parameter '" + p.name() + "'";
  if (t->data_location() == onnx::TensorProto::EXTERNAL)
    throw RuntimeError(where + " is external data the plan did not record; "
                               "re-run frenzy-opt");
  int64_t n = dst.numel();
  if (!t->raw_data().empty()) {
    if (int64_t(t->raw_data().size()) != dst.bytes())
      throw RuntimeError(where + ": " + std::to_string(t->raw_data().size()) +
                         " bytes of data for " + dst.describe());
    std::memcpy(dst.data(), t->raw_data().data(), dst.bytes());
    return;
  }
  if (dst.dtype == plan::F32 && t->float_data_size() == n) {
    std::copy(t->float_data().begin(), t->float_data().end(), dst.f32());
    return;
  }
  if (dst.dtype == plan::I64 && t->int64_data_size() == n) {
    std::copy(t->int64_data().begin(), t->int64_data().end(), dst.i64());
    return;
  }
  throw RuntimeError(where + ": data does not match " + dst.describe());
}

void OnnxWeights::store(const plan::ParamSource &p, const void *data,
                        int64_t bytes) {
  const std::string &name = p.value_from().empty() ? p.name() : p.value_from();
  auto *t = const_cast<onnx::TensorProto *>(find(name));
  if (!t)
    throw RuntimeError(path + ": no initializer or constant named '" + name +
                       "' to export parameter '" + p.name() + "' into");
  t->clear_float_data();
  t->clear_int64_data();
  t->clear_external_data();
  t->set_data_location(onnx::TensorProto::DEFAULT);
  t->set_raw_data(data, size_t(bytes));
}

void OnnxWeights::write(const std::string &out) const {
  if (model->ByteSizeLong() > (size_t(1) << 31) - 1)
    throw RuntimeError(out + ": the model with inline weights exceeds "
                             "protobuf's 2 GiB limit");
  std::string tmp = out + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f || !model->SerializeToOstream(&f))
      throw RuntimeError(tmp + ": cannot write the exported model");
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0)
    throw RuntimeError(out + ": cannot rename " + tmp + " into place");
}

} // namespace frenzy::rt

//===- TrainableParams.cpp - which weights train, which are buffers -------===//
#include "TrainableParams.h"

#include <algorithm>

namespace frenzy::import {

/// Input positions through which no gradient flows, per op type.
static bool isDifferentiableInput(const std::string &op, int index) {
  static const std::unordered_set<std::string> noGradient = {
      "Shape", "Size", "Equal", "Less", "LessOrEqual", "Greater",
      "GreaterOrEqual", "Not", "And", "Or", "Range", "ConstantOfShape",
      "ArgMax", "ArgMin", "NonZero",
      // No transformer learns through rotary trig: its inputs are buffers.
      "Sin", "Cos"};
  if (noGradient.count(op))
    return false;
  if (op == "Where")
    return index != 0;
  if (op == "Dropout" || op == "SoftmaxCrossEntropyLoss" || op == "Gather" ||
      op == "GatherElements" || op == "Slice" || op == "Reshape" ||
      op == "Expand" || op == "Unsqueeze" || op == "Squeeze" || op == "Split" ||
      op == "Tile" || op == "Trilu" || op == "ReduceSum" || op == "ReduceMean" ||
      op == "ReduceMax" || op == "ReduceMin")
    return index == 0;
  return true;
}

/// Ops that move or select a table's values without computing on them; the
/// operand index is the one carrying the values.
static bool carriesValues(const std::string &op, int index) {
  if (op == "Concat" || op == "Identity" || op == "Cast")
    return true;
  return index == 0 && (op == "Slice" || op == "Gather" || op == "Unsqueeze" ||
                        op == "Squeeze" || op == "Reshape" ||
                        op == "Transpose" || op == "Expand" || op == "Split");
}

static std::string nodeName(const onnx::NodeProto &n) {
  return n.name().empty() ? "the " + n.op_type() + " node making '" +
                                (n.output_size() ? n.output(0) : "") + "'"
                          : "node '" + n.name() + "' (" + n.op_type() + ")";
}

static std::optional<llvm::GlobPattern>
compile(const std::string &flag, const std::string &text,
        std::optional<ImportError> &error) {
  auto glob = llvm::GlobPattern::create(text);
  if (glob)
    return std::move(*glob);
  if (!error)
    error = ImportError{flag + "=" + text + " is not a valid pattern (" +
                        llvm::toString(glob.takeError()) +
                        "); use names with * and ? wildcards"};
  return std::nullopt;
}

TrainableParams::TrainableParams(const onnx::GraphProto &g,
                                 const OnnxImportOptions &options,
                                 std::optional<ImportError> &error)
    : graph(g) {
  for (const std::string &p : options.frozen)
    if (auto glob = compile("--frozen", p, error))
      frozen.push_back({p, std::move(*glob)});
  for (const std::string &p : options.trainable)
    if (auto glob = compile("--trainable", p, error))
      trainable.push_back({p, std::move(*glob)});

  // Backward from the float outputs over differentiable operands.
  for (const auto &o : g.output())
    if (o.type().has_tensor_type() &&
        isFloatType(o.type().tensor_type().elem_type()))
      live.insert(o.name());
  for (int i = g.node_size() - 1; i >= 0; --i) {
    const auto &n = g.node(i);
    bool anyLive = false;
    for (const auto &o : n.output())
      anyLive |= live.count(o) > 0;
    if (!anyLive)
      continue;
    for (int k = 0; k < n.input_size(); ++k)
      if (!n.input(k).empty() && isDifferentiableInput(n.op_type(), k))
        live.insert(n.input(k));
  }

  // Forward from the values of the graph inputs (not their shapes).
  std::unordered_set<std::string> inits;
  for (const auto &t : g.initializer())
    inits.insert(t.name());
  for (const auto &in : g.input())
    if (!inits.count(in.name()))
      dataDependent.insert(in.name());
  for (const auto &n : g.node()) {
    for (int k = 0; k < n.input_size(); ++k)
      if (!n.input(k).empty())
        readers[n.input(k)].push_back({&n, k});
    if (n.op_type() == "Shape" || n.op_type() == "Size")
      continue;
    bool depends = std::any_of(
        n.input().begin(), n.input().end(),
        [&](const std::string &in) { return dataDependent.count(in) > 0; });
    if (depends)
      for (const auto &o : n.output())
        dataDependent.insert(o);
  }
}

TrainableParams::Pattern *
TrainableParams::match(std::vector<Pattern> &list, const std::string &name) {
  for (Pattern &p : list)
    if (p.glob.match(name)) {
      p.used = true;
      return &p;
    }
  return nullptr;
}

std::string TrainableParams::noGradientReason(const std::string &name) const {
  // The first reader that stops the gradient, searched breadth-first.
  std::vector<std::string> frontier = {name};
  std::unordered_set<std::string> seen = {name};
  for (size_t i = 0; i < frontier.size(); ++i) {
    auto it = readers.find(frontier[i]);
    if (it == readers.end())
      continue;
    for (auto [node, k] : it->second) {
      if (!isDifferentiableInput(node->op_type(), k))
        return "no gradient reaches it: it is read through operand " +
               std::to_string(k) + " of " + nodeName(*node) +
               ", which carries none";
      for (const auto &o : node->output())
        if (seen.insert(o).second)
          frontier.push_back(o);
    }
  }
  return "no gradient reaches it: it does not reach a float output";
}

std::optional<std::string>
TrainableParams::positionTable(const std::string &name) const {
  // Walk the tensors that carry the table's values; every other reader must
  // be a Mul whose other operand is an activation.
  std::vector<std::string> chain = {name};
  std::unordered_set<std::string> inChain = {name};
  std::optional<std::string> indexedBy;
  bool multiplied = false;
  for (size_t i = 0; i < chain.size(); ++i) {
    for (const auto &o : graph.output())
      if (o.name() == chain[i])
        return std::nullopt; // the table itself is a result
    auto it = readers.find(chain[i]);
    if (it == readers.end())
      continue;
    for (auto [node, k] : it->second) {
      const std::string &op = node->op_type();
      if (!isDifferentiableInput(op, k))
        continue; // indices, shapes: no values flow
      if (carriesValues(op, k)) {
        if ((op == "Slice" || op == "Gather") && !indexedBy)
          indexedBy = nodeName(*node);
        for (const auto &o : node->output())
          if (inChain.insert(o).second)
            chain.push_back(o);
        continue;
      }
      if (op != "Mul" || node->input_size() != 2)
        return std::nullopt;
      const std::string &other = node->input(1 - k);
      if (inChain.count(other) || !dataDependent.count(other))
        return std::nullopt;
      multiplied = true;
    }
  }
  if (!indexedBy || !multiplied)
    return std::nullopt;
  return "a position table: indexed by " + *indexedBy +
         " and only multiplied elementwise into activations";
}

std::optional<std::string>
TrainableParams::bufferReason(const std::string &name,
                              std::optional<ImportError> &error) {
  Pattern *freeze = match(frozen, name);
  Pattern *train = match(trainable, name);
  if (freeze && train) {
    if (!error)
      error = ImportError{"'" + name + "' matches both --frozen=" +
                              freeze->text + " and --trainable=" +
                              train->text + "; name it in one of them",
                          true};
    return std::nullopt;
  }
  if (freeze)
    return "--frozen=" + freeze->text;
  if (!live.count(name)) {
    std::string why = noGradientReason(name);
    if (train) {
      if (!error)
        error = ImportError{"--trainable=" + train->text + ": '" + name +
                                "' cannot be trained, " + why,
                            true};
      return std::nullopt;
    }
    return why;
  }
  if (train)
    return std::nullopt;
  return positionTable(name);
}

std::optional<ImportError> TrainableParams::unusedPattern() const {
  for (const auto *list : {&frozen, &trainable})
    for (const Pattern &p : *list)
      if (!p.used)
        return ImportError{
            std::string(list == &frozen ? "--frozen=" : "--trainable=") +
            p.text +
            " matches no float weight of the model; names are the ONNX "
            "initializer names (see --emit=summary)"};
  return std::nullopt;
}

} // namespace frenzy::import

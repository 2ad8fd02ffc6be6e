//===- BlockNames.cpp - layer indices from exporter node names ------------===//
//
// torch.onnx (1.13+) names nodes by module path: "/h.3/attn/c_attn/MatMul";
// parameters carry dotted paths: "transformer.h.3.attn.c_attn.weight". Both
// become the token list [h, 3, attn, ...]; the first number after a word is
// the index of the ModuleList entry, i.e. the layer.
//
//===----------------------------------------------------------------------===//
#include "frenzy/Dialect/Frenzy/Transforms/BlockNames.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace frenzy {

static bool isNumber(StringRef s) {
  return !s.empty() && all_of(s, [](char c) { return isDigit(c); });
}

static bool isWord(StringRef s) { return !s.empty() && isAlpha(s.front()); }

NameScope parseNameScope(StringRef name) {
  NameScope scope;
  SmallVector<StringRef> parts;
  // Split on both separators; the final component of a node name is the op
  // ("MatMul", "Add_1"), so it never counts as module path.
  SmallVector<StringRef> slashParts;
  name.split(slashParts, '/', -1, /*KeepEmpty=*/false);
  bool slashForm = name.starts_with("/");
  for (size_t i = 0; i < slashParts.size(); ++i) {
    if (slashForm && i + 1 == slashParts.size())
      break; // op name
    SmallVector<StringRef> dotted;
    slashParts[i].split(dotted, '.', -1, false);
    parts.append(dotted.begin(), dotted.end());
  }
  if (!slashForm && !parts.empty())
    parts.pop_back(); // "weight"/"bias" of a parameter path
  scope.hasModulePath = !parts.empty() && !name.contains("::");
  for (size_t i = 1; i < parts.size(); ++i) {
    if (isNumber(parts[i]) && isWord(parts[i - 1])) {
      int64_t v;
      if (!parts[i].getAsInteger(10, v)) {
        scope.layer = v;
        break;
      }
    }
  }
  return scope;
}

} // namespace frenzy

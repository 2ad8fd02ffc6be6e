//===- CheckpointLatest.h - the last complete checkpoint of a directory ---===//
//
// Header-only, shared by every supervisor of training processes
// (frenzy-elastic, frenzy-sched serve): which step a restart resumes from.
// A checkpoint DIR/step-N/ is complete once its manifest ends with `end`
// (rank 0 renames it into place last; docs/elastic.md "Checkpoints"); a
// checkpoint of one plan marks itself in DIR/latest instead.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_PROTO_PLAN_CHECKPOINTLATEST_H
#define FRENZY_PROTO_PLAN_CHECKPOINTLATEST_H

#include <cstdint>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>

namespace frenzy::checkpoint {

/// The step of the last complete checkpoint in `dir` (0: none): the
/// largest N whose DIR/step-N/manifest ends with `end`, else the `step N`
/// line of DIR/latest.
inline int64_t latestStep(const std::string &dir) {
  int64_t best = 0;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d)) {
      long long n = 0;
      char tail = 0;
      if (std::sscanf(e->d_name, "step-%lld%c", &n, &tail) != 1 || n <= best)
        continue;
      std::ifstream in(dir + "/" + e->d_name + "/manifest");
      std::stringstream ss;
      ss << in.rdbuf();
      std::string text = ss.str();
      while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
        text.pop_back();
      if (text.size() >= 4 && text.compare(text.size() - 4, 4, "\nend") == 0)
        best = n;
    }
    ::closedir(d);
  }
  if (best > 0)
    return best;
  std::ifstream in(dir + "/latest");
  std::string word;
  int64_t step = 0;
  if (in >> word >> step && word == "step")
    return step;
  return 0;
}

} // namespace frenzy::checkpoint

#endif

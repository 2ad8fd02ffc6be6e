//===- ProbeBack.h - each node proves it can reach the launcher before mpirun starts -*- C++ -*-===//
#ifndef FRENZY_TOOLS_LAUNCH_PROBEBACK_H
#define FRENZY_TOOLS_LAUNCH_PROBEBACK_H

#include "plan.pb.h"

#include <string>

namespace frenzy::rt {

/// The exit status of a probe that reached none of the launcher's addresses.
constexpr int kProbeUnreachable = 75;

/// The probe's side (`frenzy-launch --launch-probe=SPEC` on a node): connects
/// to the launcher; returns 0, or kProbeUnreachable.
int probeBack(const std::string &spec);

/// The launcher's side: a TCP port, listened on until destroyed (a probe's
/// connection completes in the kernel's backlog; its exit status says it
/// did).
class ProbeListener {
public:
  explicit ProbeListener(const plan::Plan &p);
  ~ProbeListener();
  ProbeListener(const ProbeListener &) = delete;
  ProbeListener &operator=(const ProbeListener &) = delete;
  std::string argument;  // --launch-probe=ADDR/PORT,...
  std::string addresses; // ADDR/PORT,... for messages

private:
  int fd = -1;
};

} // namespace frenzy::rt

#endif

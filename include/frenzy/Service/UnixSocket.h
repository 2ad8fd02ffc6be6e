//===- UnixSocket.h - the service's socket: lines, peers, fds ---*- C++ -*-===//
//
// The client/service protocol is one JSON object per line over a Unix
// stream socket. The file's permissions decide who may connect; the
// service learns the caller's uid from the kernel (SO_PEERCRED), never
// from the request; files a request names travel as open descriptors
// (SCM_RIGHTS), so the service reads only what the caller could open.
//
//===----------------------------------------------------------------------===//
#ifndef FRENZY_SERVICE_UNIXSOCKET_H
#define FRENZY_SERVICE_UNIXSOCKET_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace frenzy::service {

/// A listening socket at `path` with mode `mode` (an existing socket file
/// is replaced only when no service answers on it).
llvm::Expected<int> listenUnix(const std::string &path, unsigned mode);
/// Connects; errors name the path and say whether a service runs.
llvm::Expected<int> connectUnix(const std::string &path);
/// The connected peer's uid.
llvm::Expected<unsigned> peerUid(int fd);

/// Sends one line (a newline is added) and the descriptors with it.
llvm::Error sendLine(int fd, const std::string &line,
                     const std::vector<int> &fds = {});
/// Reads one line (without its newline) and any descriptors that came with
/// it; gives up after `timeoutMs` or at `maxBytes`.
llvm::Error recvLine(int fd, std::string &line, std::vector<int> &fds,
                     int timeoutMs, size_t maxBytes = 1 << 20);

} // namespace frenzy::service

#endif

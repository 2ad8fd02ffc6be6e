//===- Client.cpp - frenzy-sched submit / status / cancel / logs ----------===//
//
// Each command is one request line and one reply line over the service's
// socket. submit opens the model and data files itself and sends the open
// descriptors: the service learns nothing from paths, and what it copies
// is exactly what this user could read.
//
//===----------------------------------------------------------------------===//
#include "ServeArgs.h"

#include "frenzy/Service/UnixSocket.h"

#include "llvm/Support/FormatVariadic.h"

#include <chrono>
#include <ctime>
#include <fcntl.h>
#include <unistd.h>

using namespace frenzy;
using namespace frenzy::sched;
using namespace frenzy::service;
namespace json = llvm::json;

static int fail(llvm::StringRef command, const llvm::Twine &msg) {
  llvm::errs() << "frenzy-sched " << command << ": error: " << msg << "\n";
  return 1;
}

/// "+SECONDS" from now, seconds since the epoch, or "YYYY-MM-DD HH:MM:SS"
/// (also with a T) in UTC.
static std::optional<double> parseDeadline(llvm::StringRef s) {
  double now = std::chrono::duration<double>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  double v;
  if (s.consume_front("+"))
    return s.getAsDouble(v) ? std::nullopt : std::optional<double>(now + v);
  if (!s.getAsDouble(v))
    return v;
  std::tm tm{};
  std::string text = s.str();
  for (const char *fmt : {"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S"}) {
    const char *end = ::strptime(text.c_str(), fmt, &tm);
    if (end && *end == 0)
      return double(::timegm(&tm));
  }
  return std::nullopt;
}

int frenzy::sched::clientMain(llvm::StringRef command,
                              llvm::ArrayRef<const char *> args) {
  SubArgs a;
  std::string err;
  std::vector<const char *> known = {"socket", "timeout"};
  if (command == "submit")
    known.insert(known.end(), {"steps", "data", "deadline", "priority",
                               "global-batch", "seq"});
  if (command == "status")
    known.insert(known.end(), {"json", "page"});
  if (!parseSubArgs(args, known, a, err))
    return fail(command, err);
  std::string socket = a.flags["socket"];
  if (socket.empty())
    if (const char *env = std::getenv("FRENZY_SCHED_SOCKET"))
      socket = env;
  if (socket.empty())
    return fail(command, "give --socket=PATH (or set FRENZY_SCHED_SOCKET): "
                         "the socket of frenzy-sched serve");
  int64_t timeout;
  if (!intFlag(a, "timeout", command == "submit" ? 600 : 30, timeout, err))
    return fail(command, err);
  size_t positionals = command == "status" ? a.positional.size() <= 1 : 1;
  if (command != "status" && a.positional.size() != 1)
    return fail(command, command == "submit"
                             ? "usage: frenzy-sched submit MODEL.onnx "
                               "--steps=N --data=TOKENS [--deadline=T] "
                               "[--priority=P]"
                             : "usage: frenzy-sched " + command + " JOB");
  if (!positionals)
    return fail(command, "usage: frenzy-sched status [JOB]");

  // status --page: the status page's document (docs/scheduler.md).
  bool page = a.flags.count("page");
  if (page && !a.positional.empty())
    return fail(command, "--page shows the whole queue; give no job id");
  json::Object req{{"op", page ? "page" : command}};
  std::vector<int> fds;
  auto closeFds = [&] {
    for (int f : fds)
      ::close(f);
  };
  if (command == "submit") {
    int64_t steps, gb, seq, priority;
    if (!intFlag(a, "steps", 0, steps, err) ||
        !intFlag(a, "global-batch", 8, gb, err) ||
        !intFlag(a, "seq", 64, seq, err) ||
        !intFlag(a, "priority", 0, priority, err))
      return fail(command, err);
    if (steps <= 0)
      return fail(command, "--steps=N (N > 0) is required");
    if (a.flags["data"].empty())
      return fail(command, "--data=TOKENS is required (the job's ranks "
                           "read their batches from it; docs/data.md)");
    req["steps"] = steps;
    req["global_batch"] = gb;
    req["seq"] = seq;
    req["priority"] = priority;
    if (a.flags.count("deadline")) {
      std::optional<double> d = parseDeadline(a.flags["deadline"]);
      if (!d)
        return fail(command, "--deadline='" + a.flags["deadline"] +
                                 "': give +SECONDS, seconds since the "
                                 "epoch, or 'YYYY-MM-DD HH:MM:SS' (UTC)");
      req["deadline"] = *d;
    }
    std::vector<std::string> files = {a.positional[0], a.flags["data"]};
    req["data"] = files.size() == 2;
    req["name"] = a.positional[0];
    for (const std::string &f : files) {
      int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        closeFds();
        return fail(command, f + ": cannot open: " + std::strerror(errno));
      }
      fds.push_back(fd);
    }
  } else if (!a.positional.empty()) {
    int64_t job;
    if (llvm::StringRef(a.positional[0]).getAsInteger(10, job))
      return fail(command, "'" + a.positional[0] + "' is not a job id");
    req["job"] = job;
  }
  auto fd = connectUnix(socket);
  if (!fd) {
    closeFds();
    return fail(command, llvm::toString(fd.takeError()));
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(req));
  std::string line;
  std::vector<int> none;
  llvm::Error e = sendLine(*fd, os.str(), fds);
  closeFds();
  if (!e)
    e = recvLine(*fd, line, none, int(timeout * 1000), size_t(1) << 30);
  ::close(*fd);
  if (e)
    return fail(command, socket + ": " + llvm::toString(std::move(e)));
  llvm::Expected<json::Value> reply = json::parse(line);
  const json::Object *r = reply ? reply->getAsObject() : nullptr;
  if (!r) {
    if (!reply)
      llvm::consumeError(reply.takeError());
    return fail(command, "the service's reply is not a JSON object");
  }
  if (!r->getBoolean("ok").value_or(false))
    return fail(command, r->getString("error").value_or("refused"));
  if (command == "submit")
    llvm::outs() << r->getInteger("job").value_or(-1) << "\n";
  else if (command == "cancel")
    llvm::outs() << "cancelled " << r->getInteger("job").value_or(-1) << "\n";
  else if (command == "logs")
    llvm::outs() << r->getString("log").value_or("");
  else if (page)
    llvm::outs() << json::Value(json::Object(
                        r->getObject("page") ? *r->getObject("page")
                                             : json::Object()))
                 << "\n";
  else if (a.flags.count("json"))
    llvm::outs() << json::Value(json::Object(*r)) << "\n";
  else {
    llvm::outs() << "job\tuser\tstate\tattempts\tnodes\treason\n";
    if (const json::Array *jobs = r->getArray("jobs"))
      for (const json::Value &v : *jobs) {
        const json::Object *j = v.getAsObject();
        if (!j)
          continue;
        llvm::outs() << llvm::formatv(
            "{0}\t{1}\t{2}\t{3}\t{4}\t{5}\n", j->getInteger("id").value_or(0),
            j->getInteger("uid").value_or(0),
            j->getString("state").value_or(""),
            j->getInteger("attempts").value_or(0),
            j->getString("nodes").value_or("-"),
            j->getString("reason").value_or(""));
      }
  }
  return 0;
}

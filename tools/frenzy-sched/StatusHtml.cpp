//===- StatusHtml.cpp - the status page's HTML and timeline picture -------===//
//
// Drawn from the snapshot document only (StatusPage.cpp), so the page and
// /status.json never disagree. One self-contained page: inline CSS and an
// inline SVG, no scripts and nothing fetched, so it renders the same in a
// headless browser on a machine without network. It reloads itself every
// 10 s. The timeline's axis runs from the first attempt inside the window
// (or the window's start) to now, so a quiet cluster's recent jobs are not
// drawn as slivers of a three-hour axis (at least 20 s are shown).
//
//===----------------------------------------------------------------------===//
#include "StatusPage.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <ctime>

using namespace frenzy;
using namespace frenzy::sched;
namespace json = llvm::json;

static std::string escape(llvm::StringRef s) {
  std::string out;
  for (char c : s)
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
    }
  return out;
}

/// `fmt` (strftime) of `t`, UTC.
static std::string utc(double t, const char *fmt = "%Y-%m-%d %H:%M:%S") {
  std::time_t secs = std::time_t(t);
  std::tm tm{};
  char buf[64];
  ::gmtime_r(&secs, &tm);
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

/// "3m 20s", "1h 05m": a span for people.
static std::string span(double s) {
  long v = std::lround(std::fabs(s));
  std::string sign = s < 0 ? "-" : "";
  if (v < 60)
    return sign + std::to_string(v) + "s";
  if (v < 3600)
    return sign + llvm::formatv("{0}m {1:2}s", v / 60, v % 60).str();
  return sign + llvm::formatv("{0}h {1:2}m", v / 3600, (v / 60) % 60).str();
}

/// A job's colour: hues spread by the golden angle, so neighbours differ.
static std::string colour(int64_t job) {
  return llvm::formatv("hsl({0},60%,55%)", (job * 137) % 360).str();
}

static std::string str(const json::Object &o, llvm::StringRef k) {
  if (auto s = o.getString(k))
    return escape(*s);
  if (auto i = o.getInteger(k))
    return std::to_string(*i);
  return "";
}

static void joinedList(llvm::raw_ostream &os, const json::Array *a) {
  if (!a)
    return;
  bool first = true;
  for (const json::Value &v : *a)
    if (auto s = v.getAsString()) {
      os << (first ? "" : " ") << escape(*s);
      first = false;
    }
}

static void runningTable(llvm::raw_ostream &os, const json::Object &doc,
                         double now) {
  const json::Array *rows = doc.getArray("running");
  os << "<h2>Running (" << (rows ? rows->size() : 0) << ")</h2>\n";
  if (!rows || rows->empty()) {
    os << "<p class=none>No job runs.</p>\n";
    return;
  }
  os << "<table id=running><tr><th>Job<th>User<th>GPUs<th>Nodes<th>Layout"
        "<th>Started<th>Checkpoint<th>Predicted finish</tr>\n";
  for (const json::Value &v : *rows) {
    const json::Object &r = *v.getAsObject();
    double started = r.getNumber("started").value_or(0);
    os << "<tr class=job data-job=" << str(r, "id") << "><td><span class=sw "
       << "style=\"background:" << colour(r.getInteger("id").value_or(0))
       << "\"></span>job " << str(r, "id") << "<td>" << str(r, "user")
       << "<td>";
    joinedList(os, r.getArray("gpus"));
    os << "<td>";
    joinedList(os, r.getArray("nodes"));
    os << "<td>" << str(r, "layout") << "<td>" << utc(started, "%H:%M:%S")
       << " (" << span(now - started) << " ago)<td>step "
       << str(r, "checkpoint_step") << " of " << str(r, "steps") << "<td>";
    if (auto f = r.getNumber("predicted_finish"))
      os << utc(*f, "%H:%M:%S") << " ("
         << (*f >= now ? "in " + span(*f - now)
                       : span(now - *f) + " overdue")
         << ")";
    else
      os << "unknown";
    os << "</tr>\n";
  }
  os << "</table>\n";
}

static void queueTable(llvm::raw_ostream &os, const json::Object &doc,
                       double now) {
  const json::Array *rows = doc.getArray("queue");
  os << "<h2>Queue (" << (rows ? rows->size() : 0) << ")</h2>\n";
  if (!rows || rows->empty()) {
    os << "<p class=none>Nothing waits.</p>\n";
    return;
  }
  os << "<table id=queue><tr><th>#<th>Job<th>User<th>Steps<th>Priority"
        "<th>Deadline<th>Waiting</tr>\n";
  for (const json::Value &v : *rows) {
    const json::Object &r = *v.getAsObject();
    os << "<tr class=job data-job=" << str(r, "id") << "><td>"
       << str(r, "position") << "<td>job " << str(r, "id") << "<td>"
       << str(r, "user") << "<td>" << str(r, "steps") << "<td>"
       << str(r, "priority") << "<td>";
    if (auto d = r.getNumber("deadline"))
      os << utc(*d);
    os << "<td>" << span(now - r.getNumber("submitted").value_or(now))
       << "</tr>\n";
  }
  os << "</table>\n";
}

static void recentTable(llvm::raw_ostream &os, const json::Object &doc) {
  const json::Array *rows = doc.getArray("recent");
  if (!rows || rows->empty())
    return;
  os << "<h2>Finished recently</h2>\n<table id=recent><tr><th>Job<th>User"
        "<th>State<th>Attempts<th>Finished</tr>\n";
  for (const json::Value &v : *rows) {
    const json::Object &r = *v.getAsObject();
    os << "<tr><td>job " << str(r, "id") << "<td>" << str(r, "user")
       << "<td class=" << str(r, "state") << ">" << str(r, "state") << "<td>"
       << str(r, "attempts") << "<td>"
       << utc(r.getNumber("finished").value_or(0)) << "</tr>\n";
  }
  os << "</table>\n";
}

/// Tick spacing: the first of these that gives at most 8 ticks.
static double tickStep(double range) {
  for (double s : {10., 30., 60., 120., 300., 600., 900., 1800., 3600.,
                   7200., 10800., 21600.})
    if (range / s <= 8)
      return s;
  return 43200;
}

static void timeline(llvm::raw_ostream &os, const json::Object &doc,
                     double now) {
  const json::Array *gpus = doc.getArray("gpus");
  const json::Array *spans = doc.getArray("timeline");
  double window = doc.getNumber("window_s").value_or(3 * 3600);
  double from = now;
  for (const json::Value &v : spans ? *spans : json::Array())
    from = std::min(from, v.getAsObject()->getNumber("start").value_or(now));
  from = std::max(now - window, std::min(from - 0.05 * (now - from), now - 20));
  const double label = 130, width = 940, rowH = 20, top = 10, axis = 24;
  size_t n = gpus ? gpus->size() : 0;
  double plot = width - label - 10;
  auto x = [&](double t) { return label + (t - from) / (now - from) * plot; };
  os << "<h2>GPU timeline</h2>\n<p class=note>" << utc(from, "%H:%M:%S")
     << " to " << utc(now, "%H:%M:%S") << " UTC (" << span(now - from)
     << "); a box per attempt, hatched while it runs.</p>\n";
  double height = top + rowH * double(n) + axis;
  os << llvm::formatv("<svg id=timeline xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
                      "font-family=\"sans-serif\" font-size=\"11\">\n",
                      width, height);
  os << "<defs><pattern id=run width=6 height=6 patternUnits=userSpaceOnUse "
        "patternTransform=\"rotate(45)\"><rect width=3 height=6 "
        "fill=\"rgba(255,255,255,0.35)\"/></pattern></defs>\n";
  std::map<std::string, size_t> row;
  for (size_t i = 0; i < n; ++i) {
    const json::Object &g = *(*gpus)[i].getAsObject();
    std::string id = g.getString("id").value_or("").str();
    row[id] = i;
    double y = top + rowH * double(i);
    os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}"
                        "\" fill=\"{4}\"/>",
                        label, y, plot, rowH, i % 2 ? "#f4f4f4" : "#ebebeb");
    os << llvm::formatv("<text x=\"4\" y=\"{0}\">{1} ({2})</text>\n",
                        y + rowH * 0.7, escape(id), str(g, "type"));
  }
  double step = tickStep(now - from);
  for (double t = std::ceil(from / step) * step; t <= now; t += step)
    os << llvm::formatv("<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" "
                        "stroke=\"#999\" stroke-dasharray=\"2,3\"/><text "
                        "x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}"
                        "</text>\n",
                        x(t), top, top + rowH * double(n) + 4, height - 6,
                        utc(t, step < 60 ? "%H:%M:%S" : "%H:%M"));
  for (const json::Value &v : spans ? *spans : json::Array()) {
    const json::Object &s = *v.getAsObject();
    auto it = row.find(s.getString("gpu").value_or("").str());
    if (it == row.end())
      continue;
    int64_t job = s.getInteger("job").value_or(0);
    std::optional<double> end = s.getNumber("end");
    double x0 = x(std::max(from, s.getNumber("start").value_or(from)));
    double x1 = std::max(x0 + 2, x(end ? *end : now));
    double y = top + rowH * double(it->second) + 2;
    std::string outcome = s.getString("outcome").value_or("running").str();
    if (outcome.empty())
      outcome = "running";
    os << llvm::formatv("<g class=span data-job=\"{0}\"><title>job {0} "
                        "attempt {1}: {2}</title><rect x=\"{3}\" y=\"{4}\" "
                        "width=\"{5}\" height=\"{6}\" rx=\"2\" fill=\"{7}\" "
                        "stroke=\"{8}\"/>",
                        job, str(s, "attempt"), outcome, x0, y, x1 - x0,
                        rowH - 4, colour(job),
                        outcome == "done" || outcome == "running" ? "#333"
                                                                  : "#c00");
    if (!end)
      os << llvm::formatv("<rect x=\"{0}\" y=\"{1}\" width=\"{2}\" "
                          "height=\"{3}\" fill=\"url(#run)\"/>",
                          x0, y, x1 - x0, rowH - 4);
    if (x1 - x0 > 24)
      os << llvm::formatv("<text x=\"{0}\" y=\"{1}\">{2}</text>", x0 + 3,
                          y + rowH * 0.58, job);
    os << "</g>\n";
  }
  os << "</svg>\n";
}

std::string frenzy::sched::renderStatusHtml(const json::Object &doc) {
  double now = doc.getNumber("now").value_or(0);
  std::string cluster = str(doc, "cluster");
  std::string html;
  llvm::raw_string_ostream os(html);
  os << "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        "<meta http-equiv=refresh content=10><title>frenzy-sched: "
     << cluster << "</title>\n<style>"
        "body{font-family:sans-serif;margin:1.5em;color:#222}"
        "table{border-collapse:collapse;margin-bottom:1em}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;"
        "font-size:13px}th{background:#eee}"
        ".sw{display:inline-block;width:10px;height:10px;margin-right:5px}"
        ".none,.note{color:#666}.failed,.cancelled{color:#c00}"
        "</style></head><body>\n";
  os << "<h1>frenzy-sched on " << cluster << "</h1>\n<p id=summary>";
  if (const json::Object *c = doc.getObject("counts"))
    for (const char *k : {"running", "queued", "done", "failed", "cancelled"})
      os << str(*c, k) << " " << k << (llvm::StringRef(k) == "cancelled"
                                           ? ""
                                           : ", ");
  os << " &middot; " << utc(now) << " UTC &middot; <a href=\"status.json\">"
        "JSON</a></p>\n";
  runningTable(os, doc, now);
  queueTable(os, doc, now);
  timeline(os, doc, now);
  recentTable(os, doc);
  os << "</body></html>\n";
  return html;
}

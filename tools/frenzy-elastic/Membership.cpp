//===- Membership.cpp - the devices an elastic run may use ----------------===//
#include "Membership.h"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace frenzy::elastic {

namespace {

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// The line without a trailing `# comment` (a `#` after a blank).
std::string uncomment(const std::string &s) {
  if (!s.empty() && s[0] == '#')
    return "";
  for (size_t i = 1; i < s.size(); ++i)
    if (s[i] == '#' && (s[i - 1] == ' ' || s[i - 1] == '\t'))
      return s.substr(0, i);
  return s;
}

std::string unquote(std::string v) {
  v = trim(v);
  if (v.size() >= 2 && (v[0] == '"' || v[0] == '\'') && v.back() == v[0])
    return v.substr(1, v.size() - 2);
  return v;
}

size_t indentOf(const std::string &s) {
  size_t i = s.find_first_not_of(' ');
  return i == std::string::npos ? s.size() : i;
}

} // namespace

ClusterFile ClusterFile::read(const std::string &path) {
  // A directory opens as a stream but reads as nothing: say what it is.
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw ElasticError(path + ": is a directory, not a cluster file");
  std::ifstream in(path);
  if (!in)
    throw ElasticError(path + ": cannot read the cluster file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

ClusterFile ClusterFile::parse(const std::string &text,
                               const std::string &path) {
  ClusterFile f;
  f.path = path;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);)
    f.lines.push_back(l);
  auto fail = [&](size_t line, const std::string &what) {
    return ElasticError(path + ":" + std::to_string(line + 1) + ": " + what);
  };
  size_t i = 0;
  for (; i < f.lines.size(); ++i) {
    std::string l = trim(uncomment(f.lines[i]));
    if (indentOf(f.lines[i]) == 0 && l.rfind("nodes:", 0) == 0) {
      std::string rest = trim(l.substr(6));
      if (rest == "[]")
        return f; // no nodes at all
      if (!rest.empty())
        throw fail(i, "frenzy-elastic reads 'nodes:' as a list of one node "
                      "per entry ('- name: ...' lines); write it that way");
      break;
    }
  }
  if (i == f.lines.size())
    throw ElasticError(path + ": no 'nodes:' list; a cluster file lists its "
                              "nodes (examples/cpu-4.yaml)");
  NodeEntry *cur = nullptr;
  size_t itemIndent = 0, keyIndent = 0, lastContent = i;
  bool haveCount = false;
  auto close = [&] {
    if (!cur)
      return;
    cur->end = lastContent + 1;
    if (cur->name.empty())
      throw fail(cur->first, "a node without a 'name'");
    if (!haveCount)
      throw fail(cur->first, "node '" + cur->name + "' has no 'count'");
  };
  auto setKey = [&](const std::string &key, const std::string &value,
                    size_t line) {
    if (key == "name") {
      cur->name = unquote(value);
    } else if (key == "gpu") {
      cur->gpu = unquote(value);
    } else if (key == "count") {
      std::string v = unquote(value);
      char *end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 1000000)
        throw fail(line, "node '" + cur->name +
                             "': 'count' must be a whole "
                             "number of devices >= 1, not '" +
                             v + "'");
      cur->count = int(n);
      cur->countLine = line;
      haveCount = true;
    }
  };
  for (++i; i < f.lines.size(); ++i) {
    const std::string &raw = f.lines[i];
    std::string l = trim(uncomment(raw));
    if (l.empty())
      continue;
    size_t ind = indentOf(raw);
    bool item = l[0] == '-' && (l.size() == 1 || l[1] == ' ');
    if (ind == 0 && !item)
      break; // the next top-level key
    if (item && (!cur || ind <= itemIndent)) {
      close();
      f.entries.emplace_back();
      cur = &f.entries.back();
      cur->first = i;
      haveCount = false;
      itemIndent = ind;
      std::string rest = trim(l.substr(1));
      keyIndent = raw.find(rest, ind + 1);
      if (!rest.empty() && rest[0] == '{') {
        size_t closeBrace = rest.find('}');
        if (closeBrace == std::string::npos)
          throw fail(i, "a '{...}' node entry must close on its line");
        std::stringstream fields(rest.substr(1, closeBrace - 1));
        for (std::string kv; std::getline(fields, kv, ',');) {
          size_t colon = kv.find(':');
          if (colon != std::string::npos)
            setKey(trim(kv.substr(0, colon)), kv.substr(colon + 1), i);
        }
      } else if (size_t colon = rest.find(':'); colon != std::string::npos) {
        setKey(trim(rest.substr(0, colon)), rest.substr(colon + 1), i);
      }
      lastContent = i;
      continue;
    }
    if (!cur)
      throw fail(i, "expected a '- name: ...' node entry under 'nodes:'");
    if (ind == keyIndent)
      if (size_t colon = l.find(':'); colon != std::string::npos)
        setKey(trim(l.substr(0, colon)), l.substr(colon + 1), i);
    lastContent = i;
  }
  close();
  std::set<std::string> names;
  for (const NodeEntry &n : f.entries)
    if (!names.insert(n.name).second)
      throw fail(n.first, "node '" + n.name + "' is listed twice");
  return f;
}

Membership ClusterFile::membership() const {
  Membership m;
  for (const NodeEntry &n : entries)
    m.push_back({n.name, n.count});
  return m;
}

std::string ClusterFile::derive(const Membership &m) const {
  std::map<std::string, int> want(m.begin(), m.end());
  std::vector<bool> drop(lines.size(), false);
  std::vector<std::string> out = lines;
  std::set<std::string> removed;
  for (const NodeEntry &n : entries) {
    int c = want.count(n.name) ? want[n.name] : 0;
    if (c <= 0) {
      removed.insert(n.name);
      for (size_t k = n.first; k < n.end; ++k)
        drop[k] = true;
    } else if (c != n.count) {
      static const std::regex count("(count\\s*:\\s*)[0-9]+");
      std::smatch m;
      std::string &l = out[n.countLine];
      if (std::regex_search(l, m, count))
        l = m.prefix().str() + m[1].str() + std::to_string(c) +
            m.suffix().str();
    }
  }
  // Rack lists name nodes: a removed node leaves them too.
  static const std::regex flowList("\\[([^\\]]*)\\]");
  std::string text;
  for (size_t k = 0; k < out.size(); ++k) {
    if (drop[k])
      continue;
    std::string l = out[k];
    if (!removed.empty() && l.find('[') != std::string::npos) {
      std::string rebuilt;
      auto begin = std::sregex_iterator(l.begin(), l.end(), flowList);
      size_t at = 0;
      for (auto it = begin; it != std::sregex_iterator(); ++it) {
        rebuilt += l.substr(at, it->position() - at);
        std::stringstream items((*it)[1].str());
        std::string kept;
        for (std::string x; std::getline(items, x, ',');)
          if (!removed.count(unquote(x)))
            kept += (kept.empty() ? "" : ", ") + trim(x);
        rebuilt += "[" + kept + "]";
        at = it->position() + it->length();
      }
      l = rebuilt + l.substr(at);
    }
    text += l + "\n";
  }
  return text;
}

int deviceCount(const Membership &m) {
  int n = 0;
  for (auto &[node, c] : m)
    n += c;
  return n;
}

std::string describe(const Membership &m) {
  std::string s;
  for (auto &[node, c] : m)
    if (c > 0)
      s += node + ":" + std::to_string(c) + " ";
  int n = deviceCount(m);
  return s + "(" + std::to_string(n) + (n == 1 ? " device)" : " devices)");
}

Membership without(const Membership &m,
                   const std::map<std::string, int> &lost) {
  Membership out;
  for (auto &[node, c] : m) {
    auto it = lost.find(node);
    out.push_back({node, std::max(0, c - (it == lost.end() ? 0 : it->second))});
  }
  return out;
}

std::string difference(const Membership &a, const Membership &b, bool *grew,
                       bool *shrank) {
  std::map<std::string, int> before, after;
  for (auto &[n, c] : a)
    before[n] += c;
  for (auto &[n, c] : b)
    after[n] += c;
  *grew = *shrank = false;
  std::string s;
  std::set<std::string> names;
  for (auto &[n, c] : before)
    names.insert(n);
  for (auto &[n, c] : after)
    names.insert(n);
  for (const std::string &n : names) {
    int d = after[n] - before[n];
    if (d == 0)
      continue;
    (d > 0 ? *grew : *shrank) = true;
    s += (s.empty() ? "" : " ") + std::string(d > 0 ? "+" : "-") + n + ":" +
         std::to_string(d > 0 ? d : -d);
  }
  return s;
}

} // namespace frenzy::elastic

#include "ccsim/run_report.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "sim/error.hpp"
#include "sim/report.hpp"

namespace ccsim::cli {

namespace {

const RunPoint* find(const VariantResult& v, CollectiveKind c, const std::string& column, Bytes size) {
  for (const auto& p : v.points)
    if (p.collective == c && p.column == column && p.size == size) return &p;
  return nullptr;
}

std::string centred(const std::string& text, std::size_t width) {
  if (text.size() >= width) return text.substr(0, width);
  const std::size_t left = (width - text.size()) / 2;
  return std::string(left, ' ') + text + std::string(width - text.size() - left, ' ');
}

std::ofstream open_for_writing(const std::string& path) {
  std::ofstream out(path);
  if (!out) throw Error(path + ": cannot open for writing");
  return out;
}

}  // namespace

std::vector<CollectiveKind> collectives_of(const VariantResult& v) {
  std::vector<CollectiveKind> out;
  for (const auto& p : v.points)
    if (std::find(out.begin(), out.end(), p.collective) == out.end()) out.push_back(p.collective);
  return out;
}

std::vector<Bytes> sizes_of(const VariantResult& v, CollectiveKind c) {
  std::set<Bytes> sizes;
  for (const auto& p : v.points)
    if (p.collective == c) sizes.insert(p.size);
  return {sizes.begin(), sizes.end()};
}

const RunPoint* winner(const VariantResult& v, CollectiveKind c, Bytes size) {
  // auto is NCCL's choice among the algorithms, not an algorithm: it competes only when alone.
  const bool explicit_columns = std::any_of(v.columns.begin(), v.columns.end(), [](const std::string& c) { return !c.starts_with("auto"); });
  const RunPoint* best = nullptr;
  for (const auto& column : v.columns) {
    if (explicit_columns && column.starts_with("auto")) continue;
    const RunPoint* p = find(v, c, column, size);
    if (p && p->ran && (!best || p->time_us < best->time_us)) best = p;
  }
  return best;
}

std::vector<Crossover> crossovers(const VariantResult& v, CollectiveKind c) {
  std::vector<Crossover> out;
  std::string previous;
  for (Bytes s : sizes_of(v, c)) {
    const RunPoint* w = winner(v, c, s);
    if (!w) continue;
    if (!previous.empty() && w->column != previous) out.push_back({s, previous, w->column});
    previous = w->column;
  }
  return out;
}

void print_variant(std::ostream& out, const RunResult& result, std::size_t index) {
  const VariantResult& v = result.variants.at(index);
  const VariantResult& base = result.variants.front();
  out << "# variant \"" << v.name << "\"" << (index == 0 ? " (base)" : " (vs base \"" + base.name + "\")") << ": " << v.ranks
      << " ranks on " << v.topology << ", " << v.nodes << (v.nodes == 1 ? " node" : " nodes") << ", model " << v.model << "\n";
  if (!v.description.empty()) out << "# " << v.description << "\n";
  const bool has_auto = std::any_of(v.columns.begin(), v.columns.end(), [](const std::string& c) { return c.starts_with("auto"); });
  constexpr std::size_t kCell = 18;
  for (CollectiveKind c : collectives_of(v)) {
    out << "#\n# " << to_string(c) << ": time (us) and busbw (GB/s) per algorithm; winner = fastest; vs base = its time"
        << " against the base's winner; bound = busbw the bandwidth lower bound allows; eff = winner busbw / bound\n";
    std::string head = "#       size ", units = "#        (B) ";
    for (const auto& column : v.columns) {
      head += "|" + centred(column, kCell);
      char u[32];
      std::snprintf(u, sizeof u, "%9s %7s ", "time", "busbw");
      units += "|" + std::string(u);
    }
    char tail[128];
    std::snprintf(tail, sizeof tail, "| %s%-11s %8s %8s %5s", has_auto ? "auto ran             " : "", "winner", "vs base", "bound", "eff");
    out << head << tail << "\n" << units << "|\n";
    for (Bytes s : sizes_of(v, c)) {
      char cell[64];
      std::snprintf(cell, sizeof cell, "%12llu ", static_cast<unsigned long long>(s));
      std::string line = cell;
      for (const auto& column : v.columns) {
        const RunPoint* p = find(v, c, column, s);
        if (p && p->ran) std::snprintf(cell, sizeof cell, " %9s %7.2f ", format_time_us(p->time_us).c_str(), p->busbw_gbps);
        else std::snprintf(cell, sizeof cell, " %9s %7s ", p ? "n/a" : "-", "");
        line += cell;
      }
      line += " ";
      if (has_auto) {
        const RunPoint* a = nullptr;
        for (const auto& column : v.columns)
          if (!a && column.starts_with("auto")) a = find(v, c, column, s);
        const std::string what = a && a->ran ? a->algorithm + "/" + a->protocol + "/" + std::to_string(a->channels) : "-";
        std::snprintf(cell, sizeof cell, " %-20s", what.c_str());
        line += cell;
      }
      const RunPoint* w = winner(v, c, s);
      std::string change = "-";
      if (w && index > 0)
        if (const RunPoint* bw = winner(base, c, s); bw && bw->time_us > 0) {
          std::snprintf(cell, sizeof cell, "%+.1f%%", 100 * (w->time_us / bw->time_us - 1));
          change = cell;
        }
      if (w) {
        char bound[16];
        std::snprintf(bound, sizeof bound, "%.1f", w->bound_busbw_gbps);
        std::snprintf(cell, sizeof cell, " %-11s %8s %8s %4.0f%%", w->column.c_str(), change.c_str(), bound, 100 * w->efficiency);
      } else {
        std::snprintf(cell, sizeof cell, " %-11s %8s %8s %5s", "n/a", "-", "-", "-");
      }
      line += cell;
      out << line << "\n";
    }
    const auto xs = crossovers(v, c);
    if (xs.empty()) {
      const auto sizes = sizes_of(v, c);
      const RunPoint* w = sizes.empty() ? nullptr : winner(v, c, sizes.front());
      out << "# crossovers: none" << (w ? " (" + w->column + " wins at every size)" : "") << "\n";
    } else {
      out << "# crossovers:";
      for (std::size_t i = 0; i < xs.size(); ++i)
        out << (i ? "," : "") << " " << xs[i].from << " -> " << xs[i].to << " at " << format_bytes(xs[i].size);
      out << "\n";
    }
    std::set<std::string> reasons;
    for (const auto& p : v.points)
      if (p.collective == c && !p.ran && reasons.insert(p.column + ": " + p.reason).second)
        out << "# n/a " << p.column << ": " << p.reason << "\n";
  }
  out << "#\n";
}

void write_results_json(const std::string& path, const RunResult& result) {
  using nlohmann::json;
  json variants = json::array();
  for (const auto& v : result.variants) {
    json points = json::array();
    for (const auto& p : v.points) {
      json j{{"collective", to_string(p.collective)}, {"algorithm", p.column}, {"size_bytes", p.size}, {"status", p.ran ? "ok" : "n/a"}};
      if (p.ran) {
        j.update({{"selected", p.algorithm}, {"protocol", p.protocol}, {"channels", p.channels}, {"time_us", p.time_us},
                  {"algbw_gbps", p.algbw_gbps}, {"busbw_gbps", p.busbw_gbps}, {"bound_busbw_gbps", p.bound_busbw_gbps},
                  {"efficiency", p.efficiency}, {"bound_limiter", p.limiter}});
      } else {
        j["reason"] = p.reason;
      }
      points.push_back(j);
    }
    json xs = json::object();
    for (CollectiveKind c : collectives_of(v)) {
      json list = json::array();
      for (const auto& x : crossovers(v, c)) list.push_back({{"size_bytes", x.size}, {"from", x.from}, {"to", x.to}});
      xs[std::string(to_string(c))] = list;
    }
    variants.push_back({{"name", v.name}, {"description", v.description}, {"topology", v.topology}, {"model", v.model},
                        {"nodes", v.nodes}, {"ranks", v.ranks}, {"algorithms", v.columns}, {"wall_s", v.wall_s},
                        {"crossovers", xs}, {"points", points}});
  }
  auto out = open_for_writing(path);
  out << json{{"scenario", result.scenario}, {"description", result.description}, {"file", result.origin}, {"base", result.variants.front().name},
              {"variants", variants}}
             .dump(1)
      << "\n";
  if (!out) throw Error(path + ": write failed");
}

void write_results_csv(const std::string& path, const RunResult& result) {
  auto out = open_for_writing(path);
  out << "variant,collective,algorithm,protocol,channels,size_bytes,time_us,algbw_gbps,busbw_gbps,bound_busbw_gbps,"
         "efficiency,nodes,ranks,selected\n";
  // Names are the scenario's: quote them when they hold a comma or a quote (RFC 4180).
  auto field = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  for (const auto& v : result.variants)
    for (const auto& p : v.points) {
      if (!p.ran) continue;
      char nums[256];
      std::snprintf(nums, sizeof nums, "%.6f,%.6f,%.6f,%.6f,%.6f", p.time_us, p.algbw_gbps, p.busbw_gbps, p.bound_busbw_gbps, p.efficiency);
      out << field(v.name) << "," << to_string(p.collective) << "," << field(p.column) << "," << p.protocol << "," << p.channels
          << "," << p.size << "," << nums << "," << v.nodes << "," << v.ranks << "," << p.algorithm << "\n";
    }
  if (!out) throw Error(path + ": write failed");
}

}  // namespace ccsim::cli

#include "planner/report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace hexir::planner {
namespace {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

std::string FormatPlanTable(const PlanReport& r) {
  std::ostringstream os;
  os << "memory plan for @" << r.function << "\n";
  char line[512];
  std::snprintf(line, sizeof(line), "  %-40s %10s %10s %6s %6s  %s\n", "buffer", "size", "offset", "first",
                "last", "shares memory of");
  os << line;
  for (const ReportBuffer& b : r.buffers) {
    std::snprintf(line, sizeof(line), "  %-40s %10llu %10llu %6lld %6lld  %s\n", b.name.c_str(),
                  static_cast<unsigned long long>(b.size), static_cast<unsigned long long>(b.offset),
                  static_cast<long long>(b.first), static_cast<long long>(b.last),
                  b.alias_of.empty() ? "-" : b.alias_of.c_str());
    os << line;
  }
  std::snprintf(line, sizeof(line),
                "  arena %llu bytes; lower bound %llu bytes (before in-place %llu); fragmentation %.1f%%; "
                "naive %llu bytes; solver %s (%s)\n"
                "  live peak %llu bytes in program order, %llu after scheduling\n"
                "  constants %llu bytes stored, %llu bytes filled at load\n",
                static_cast<unsigned long long>(r.arena_bytes), static_cast<unsigned long long>(r.lower_bound_bytes),
                static_cast<unsigned long long>(r.lower_bound_before_sharing), 100.0 * r.fragmentation(),
                static_cast<unsigned long long>(r.naive_bytes), r.method.c_str(),
                r.quality.empty() ? "-" : r.quality.c_str(), static_cast<unsigned long long>(r.peak_program_order),
                static_cast<unsigned long long>(r.peak_scheduled),
                static_cast<unsigned long long>(r.constant_bytes),
                static_cast<unsigned long long>(r.filled_constant_bytes));
  os << line;
  if (r.capacity_bytes != 0) {
    std::snprintf(line, sizeof(line), "  capacity %llu bytes for the arena: %.1f%% used\n",
                  static_cast<unsigned long long>(r.capacity_bytes), 100.0 * r.arena_bytes / r.capacity_bytes);
    os << line;
  }
  if (!r.host_link_space.empty()) {
    auto ms = [](double seconds, uint64_t bytes) {
      char text[64];
      if (seconds > 0 || bytes == 0)
        std::snprintf(text, sizeof(text), "%.3f ms", 1000.0 * seconds);
      else
        std::snprintf(text, sizeof(text), "no transfer rate: see --machine");
      return std::string(text);
    };
    std::snprintf(line, sizeof(line),
                  "  host <-> '%s': %llu bytes of constants uploaded once at load (%s); per run %llu bytes in, "
                  "%llu bytes out (%s)\n",
                  r.host_link_space.c_str(), static_cast<unsigned long long>(r.upload_once_bytes),
                  ms(r.upload_once_seconds, r.upload_once_bytes).c_str(),
                  static_cast<unsigned long long>(r.upload_per_run_bytes),
                  static_cast<unsigned long long>(r.download_per_run_bytes),
                  ms(r.per_run_transfer_seconds, r.upload_per_run_bytes + r.download_per_run_bytes).c_str());
    os << line;
  }
  if (!r.moves.empty()) {
    std::snprintf(line, sizeof(line),
                  "  to fit: %zu value(s) moved out and back, %llu bytes copied (%.3f ms of transfers); "
                  "%llu bytes recomputed (%.3f ms of work)\n",
                  static_cast<size_t>(std::count_if(r.moves.begin(), r.moves.end(),
                                                    [](const ReportMove& m) { return !m.to_space.empty(); })),
                  static_cast<unsigned long long>(r.moved_bytes), 1000.0 * r.transfer_seconds,
                  static_cast<unsigned long long>(r.recomputed_bytes), 1000.0 * r.recompute_seconds);
    os << line;
    for (const ReportMove& m : r.moves) {
      if (m.to_space.empty())
        std::snprintf(line, sizeof(line), "    %s (%llu B) dropped after dispatch %lld, recomputed before dispatch %lld\n",
                      m.name.c_str(), static_cast<unsigned long long>(m.size), static_cast<long long>(m.out_after),
                      static_cast<long long>(m.in_before));
      else
        std::snprintf(line, sizeof(line), "    %s (%llu B) to '%s' after dispatch %lld, back before dispatch %lld\n",
                      m.name.c_str(), static_cast<unsigned long long>(m.size), m.to_space.c_str(),
                      static_cast<long long>(m.out_after), static_cast<long long>(m.in_before));
      os << line;
    }
  }
  return os.str();
}

std::string FormatPlanJson(const PlanReport& r) {
  std::ostringstream os;
  os << "{\n  \"function\": " << JsonString(r.function) << ",\n"
     << "  \"arena_bytes\": " << r.arena_bytes << ",\n"
     << "  \"lower_bound_bytes\": " << r.lower_bound_bytes << ",\n"
     << "  \"lower_bound_before_in_place_bytes\": " << r.lower_bound_before_sharing << ",\n"
     << "  \"naive_bytes\": " << r.naive_bytes << ",\n"
     << "  \"constant_bytes\": " << r.constant_bytes << ",\n"
     << "  \"filled_constant_bytes\": " << r.filled_constant_bytes << ",\n"
     << "  \"peak_program_order_bytes\": " << r.peak_program_order << ",\n"
     << "  \"peak_scheduled_bytes\": " << r.peak_scheduled << ",\n"
     << "  \"solver\": " << JsonString(r.method) << ",\n"
     << "  \"quality\": " << JsonString(r.quality) << ",\n"
     << "  \"capacity_bytes\": " << r.capacity_bytes << ",\n"
     << "  \"host_link_space\": " << JsonString(r.host_link_space) << ",\n"
     << "  \"upload_once_bytes\": " << r.upload_once_bytes << ",\n"
     << "  \"upload_per_run_bytes\": " << r.upload_per_run_bytes << ",\n"
     << "  \"download_per_run_bytes\": " << r.download_per_run_bytes << ",\n"
     << "  \"upload_once_seconds\": " << r.upload_once_seconds << ",\n"
     << "  \"per_run_transfer_seconds\": " << r.per_run_transfer_seconds << ",\n"
     << "  \"moved_bytes\": " << r.moved_bytes << ",\n"
     << "  \"recomputed_bytes\": " << r.recomputed_bytes << ",\n"
     << "  \"transfer_seconds\": " << r.transfer_seconds << ",\n"
     << "  \"recompute_seconds\": " << r.recompute_seconds << ",\n"
     << "  \"moves\": [";
  for (size_t i = 0; i < r.moves.size(); ++i) {
    const ReportMove& m = r.moves[i];
    os << (i ? ", " : "") << "{\"name\": " << JsonString(m.name) << ", \"size\": " << m.size
       << ", \"out_after\": " << m.out_after << ", \"in_before\": " << m.in_before
       << ", \"to_space\": " << (m.to_space.empty() ? "null" : JsonString(m.to_space))
       << ", \"recomputed\": " << (m.to_space.empty() ? "true" : "false") << "}";
  }
  os << "],\n"
     << "  \"buffers\": [";
  for (size_t i = 0; i < r.buffers.size(); ++i) {
    const ReportBuffer& b = r.buffers[i];
    os << (i ? ",\n" : "\n") << "    {\"name\": " << JsonString(b.name) << ", \"size\": " << b.size
       << ", \"offset\": " << b.offset << ", \"first\": " << b.first << ", \"last\": " << b.last
       << ", \"alias_of\": " << (b.alias_of.empty() ? "null" : JsonString(b.alias_of)) << "}";
  }
  os << (r.buffers.empty() ? "]\n}\n" : "\n  ]\n}\n");
  return os.str();
}

std::string FormatPlanSvg(const PlanReport& r) {
  const double width = 900, height = 540, left = 70, top = 30, plot_w = width - left - 20,
               plot_h = height - top - 50;
  int64_t steps = 1;
  for (const ReportBuffer& b : r.buffers) steps = std::max(steps, b.last + 1);
  // The vertical scale reaches the capacity when there is one (its line is drawn too).
  double arena = std::max<double>({1.0, static_cast<double>(r.arena_bytes), static_cast<double>(r.capacity_bytes)});
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
     << "\" font-family=\"monospace\" font-size=\"10\">\n"
     << "<text x=\"" << left << "\" y=\"18\" font-size=\"13\">@" << XmlEscape(r.function) << ": arena "
     << r.arena_bytes << " B, lower bound " << r.lower_bound_bytes << " B</text>\n"
     << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << plot_h
     << "\" fill=\"#f8f8f8\" stroke=\"#444\"/>\n";
  // The lower bound as a dashed line.
  double lb_y = top + plot_h - plot_h * r.lower_bound_bytes / arena;
  os << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << lb_y << "\" y2=\"" << lb_y
     << "\" stroke=\"#c00\" stroke-dasharray=\"4,3\"/>\n";
  if (r.capacity_bytes != 0) {
    double cap_y = top + plot_h - plot_h * r.capacity_bytes / arena;
    os << "<line x1=\"" << left << "\" x2=\"" << left + plot_w << "\" y1=\"" << cap_y << "\" y2=\"" << cap_y
       << "\" stroke=\"#06c\" stroke-width=\"2\"><title>capacity " << r.capacity_bytes << " B</title></line>\n"
       << "<text x=\"" << left + plot_w - 150 << "\" y=\"" << cap_y - 3 << "\" fill=\"#06c\">capacity "
       << r.capacity_bytes << " B</text>\n";
  }
  static const char* kColors[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3",
                                  "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd"};
  for (size_t i = 0; i < r.buffers.size(); ++i) {
    const ReportBuffer& b = r.buffers[i];
    double x = left + plot_w * b.first / steps;
    double w = plot_w * (b.last - b.first + 1) / steps;
    double h = plot_h * b.size / arena;
    double y = top + plot_h - plot_h * (b.offset + b.size) / arena;
    os << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\"" << h << "\" fill=\""
       << kColors[i % 10] << "\" stroke=\"#333\" stroke-width=\"0.5\"><title>" << XmlEscape(b.name) << ": "
       << b.size << " B at " << b.offset << ", steps " << b.first << ".." << b.last << "</title></rect>\n";
    // Labels are cut to what fits (about 7 px per character at this font size).
    // Compiler names are "<function>_dispatch_<n>_<op>": the "<n>_<op>" part tells them apart.
    size_t fits = w > 4 ? static_cast<size_t>((w - 4) / 7) : 0;
    std::string label = b.name;
    if (size_t at = label.find("_dispatch_"); at != std::string::npos) label = label.substr(at + 10);
    if (h > 11 && fits >= 3) {
      if (label.size() > fits) label = label.substr(0, fits - 1) + "~";
      os << "<text x=\"" << x + 2 << "\" y=\"" << y + 10 << "\">" << XmlEscape(label) << "</text>\n";
    }
  }
  os << "<text x=\"" << left << "\" y=\"" << height - 20 << "\">dispatch 0</text>\n"
     << "<text x=\"" << left + plot_w - 80 << "\" y=\"" << height - 20 << "\">dispatch " << steps - 1 << "</text>\n"
     << "<text x=\"5\" y=\"" << top + 10 << "\">" << r.arena_bytes << "</text>\n"
     << "<text x=\"5\" y=\"" << top + plot_h << "\">0</text>\n</svg>\n";
  return os.str();
}

std::string FormatPlansJson(const std::vector<PlanReport>& reports) {
  if (reports.size() == 1) return FormatPlanJson(reports.front());
  std::string json = "{\"functions\": [\n";
  for (size_t i = 0; i < reports.size(); ++i) {
    std::string plan = FormatPlanJson(reports[i]);
    while (!plan.empty() && plan.back() == '\n') plan.pop_back();
    json += plan + (i + 1 < reports.size() ? ",\n" : "\n");
  }
  return json + "]}\n";
}

std::string FormatPlansSvg(const std::vector<PlanReport>& reports) {
  if (reports.size() == 1) return FormatPlanSvg(reports.front());
  // Each function's drawing as a nested <svg> placed below the one before.
  const int height = 540;
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"" << height * reports.size() << "\">\n";
  for (size_t i = 0; i < reports.size(); ++i) {
    std::string drawing = FormatPlanSvg(reports[i]);
    // "<svg " -> "<svg y=..." on the drawing's root element.
    drawing.insert(5, "y=\"" + std::to_string(height * i) + "\" ");
    os << drawing;
  }
  os << "</svg>\n";
  return os.str();
}

}  // namespace hexir::planner

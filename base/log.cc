#include "base/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

namespace hexir {
namespace {

std::mutex g_mu;
LogHandler g_handler = nullptr;
void* g_user = nullptr;

const char* SeverityName(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kInfo: return "info";
    case LogSeverity::kWarning: return "warning";
    case LogSeverity::kError: return "error";
  }
  return "?";
}

}  // namespace

void SetLogHandler(LogHandler handler, void* user) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_handler = handler;
  g_user = user;
}

void Log(LogSeverity severity, const std::string& message) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_handler != nullptr) {
    g_handler(severity, message.c_str(), g_user);
    return;
  }
  std::fprintf(stderr, "hexir: %s: %s\n", SeverityName(severity), message.c_str());
}

}  // namespace hexir

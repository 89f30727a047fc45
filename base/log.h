// The runtime's own side of include/hexir/log.h: Log() passes a message to the installed
// handler. Thread safety: thread-safe.
#pragma once

#include <string>

#include "hexir/log.h"

namespace hexir {

void Log(LogSeverity severity, const std::string& message);

}  // namespace hexir

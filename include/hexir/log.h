// Where the runtime's messages go. The runtime reports errors as Status; what it cannot return
// (a device destroyed with buffers still allocated) it logs here: by default one line on
// stderr ("hexir: warning: ..."), or to the handler an application installs.
//
// Thread safety: SetLogHandler may be called at any time; the handler may be called from any
// thread and must be thread-safe.
#pragma once

#include "hexir/export.h"

namespace hexir {

enum class LogSeverity { kInfo, kWarning, kError };

// `message` is valid during the call only. `user` is the pointer given to SetLogHandler.
using LogHandler = void (*)(LogSeverity severity, const char* message, void* user);

// nullptr restores the default (stderr).
HEXIR_API void SetLogHandler(LogHandler handler, void* user);

}  // namespace hexir

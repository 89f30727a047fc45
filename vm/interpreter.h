// The command interpreter: replays a verified function's commands on a device. It trusts the
// image (the reader verified every slot and arity) and allocates nothing.
#pragma once

#include <vector>

#include "hexir/session.h"
#include "hexir/status.h"
#include "hal/device.h"
#include "serializer/reader.h"
#include "vm/module.h"

namespace hexir::vm {

// Where each kind of slot points for one run.
struct SpaceBases {
  const hal::DevicePtr* arenas = nullptr;  // per arena of the function
  hal::DevicePtr constants = nullptr;
  hal::DevicePtr filled_constants = nullptr;
  const hal::DevicePtr* inputs = nullptr;
  const hal::DevicePtr* outputs = nullptr;
};

// Issues the function's commands on `queue` (the session's); the caller synchronizes.
// `bindings` must hold at least as many entries as the largest dispatch arity. With
// `command_ms` (one entry per command), each command is waited for and its time added to its
// entry: a profile, which serializes the queue. The time is the device's own clock where the
// queue keeps one (CUDA events around the command, launch overhead excluded), else the wall
// time; `*device_clock` (when given) says which.
// With `poison`, each ALLOC fills its arena with a signalling-NaN pattern (SessionOptions::poison).
// With `control`, the run stops (CANCELLED, DEADLINE_EXCEEDED) when it says so, checked before
// each command and each loop trip.
Status Execute(const Module& module, const serializer::fb::Function& function, const SpaceBases& bases,
               std::vector<hal::DevicePtr>& bindings, hal::CommandQueue& queue, double* command_ms = nullptr,
               bool poison = false, bool* device_clock = nullptr, const RunOptions* control = nullptr);

// OK, or why `control` stops a run that has issued `commands` commands.
Status CheckRunControl(const RunOptions* control, uint64_t commands);

// Whether `function` has LOOP or IF commands: its runs read conditions back from the device
// mid-run, so it cannot be recorded as one graph.
bool HasControlFlow(const serializer::fb::Function& function);

// The largest dispatch arity in `function`.
size_t MaxDispatchArity(const serializer::fb::Function& function);

}  // namespace hexir::vm

// hal::CommandQueue: how work reaches a device. Commands run in the order they are issued;
// Synchronize() waits for all of them (on the host, each completes before it returns).
//
// Ownership: owned by its device. Thread safety: Dispatch/Fill/Copy may be called from several
// threads on disjoint memory (each Session runs on its own thread).
#pragma once

#include <cstdint>
#include <optional>

#include "hexir/span.h"
#include "hexir/status.h"
#include "hal/buffer.h"
#include "hal/executable.h"

namespace hexir::hal {

struct Workgroups {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t total() const { return uint64_t{x} * y * z; }
};

// Which side of a copy is host memory: a device with memory of its own (a GPU) moves bytes
// differently each way.
enum class CopyDirection {
  kHostToDevice,    // source: host memory; target: device memory
  kDeviceToHost,    // source: device memory; target: host memory
  kDeviceToDevice,  // both device memory
};

// What every queue's Fill checks: a pattern of 1, 2, 4 or 8 bytes that tiles `length`.
inline Status CheckFill(uint64_t length, uint8_t pattern_length) {
  if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4 && pattern_length != 8)
    return InvalidArgumentError("fill pattern length ", int{pattern_length}, " is not 1, 2, 4 or 8");
  if (length % pattern_length != 0)
    return InvalidArgumentError("fill of ", length, " bytes is not a multiple of its ", int{pattern_length},
                                "-byte pattern");
  return Status::Ok();
}

class CommandQueue {
 public:
  virtual ~CommandQueue() = default;

  // Runs entry `entry` of `executable` over `workgroups` with `bindings` (device pointers).
  virtual Status Dispatch(const Executable& executable, uint32_t entry, Workgroups workgroups,
                          Span<const DevicePtr> bindings) = 0;
  // Fills `length` bytes of device memory at `target` with a repeating `pattern_length`-byte
  // pattern (1, 2, 4 or 8).
  virtual Status Fill(DevicePtr target, uint64_t length, uint64_t pattern, uint8_t pattern_length) = 0;
  // Copies `length` bytes between ranges that do not overlap (a GPU's copy engines do not
  // promise memmove semantics; the VM never copies between overlapping slots).
  virtual Status Copy(CopyDirection direction, void* target, const void* source, uint64_t length) = 0;
  virtual Status Synchronize() = 0;

  // Device time: the commands issued between BeginTiming(clock) and EndTiming(clock) as the
  // device's own clock measured them, readable after Synchronize(). Two clocks run apart, so a
  // profile can time each command (kCommand) inside a run that is timed whole (kRun). A device
  // whose work runs on the calling thread (the host) keeps no clock of its own: nullopt, and
  // the caller's wall time is the time.
  enum class TimingClock { kRun = 0, kCommand = 1 };
  virtual Status BeginTiming(TimingClock) { return Status::Ok(); }
  virtual Status EndTiming(TimingClock) { return Status::Ok(); }
  virtual StatusOr<std::optional<double>> TimedMilliseconds(TimingClock) { return std::optional<double>(); }
};

}  // namespace hexir::hal

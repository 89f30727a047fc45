#include "hal/host/host_queue.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "hal/host/host_executable.h"

namespace hexir::hal {
namespace {

struct DispatchContext {
  HostKernelFn fn;
  void* const* bindings;
};

void RunWorkgroups(void* ctx, uint32_t begin, uint32_t end) {
  auto* c = static_cast<DispatchContext*>(ctx);
  c->fn(c->bindings, begin, end);
}

// "kernel 'k': misaligned 16-byte vector load at byte 0x24 of shared buffer 1 (block 3, thread 7)".
Status FaultError(const std::string& kernel, const HostKernelFault& f) {
  char where[96];
  if (f.space == HostKernelFault::kGlobal)
    std::snprintf(where, sizeof where, "binding %llu", static_cast<unsigned long long>(f.buffer));
  else if (f.space == HostKernelFault::kShared)
    std::snprintf(where, sizeof where, "shared buffer %llu", static_cast<unsigned long long>(f.buffer));
  else
    std::snprintf(where, sizeof where, "the thread's local memory");
  char offset[32];
  std::snprintf(offset, sizeof offset, "0x%llx", static_cast<unsigned long long>(f.offset));
  const char* access = f.kind == HostKernelFault::kMisalignedStore ? "store" : "load";
  return InternalError("kernel '", kernel, "': misaligned ", f.bytes, "-byte vector ", access, " at byte ", offset,
                       " of ", where, " (block ", f.block, ", thread ", f.thread, "); a GPU needs ", f.alignment,
                       "-byte alignment");
}

}  // namespace

Status HostQueue::Dispatch(const Executable& executable, uint32_t entry, Workgroups workgroups,
                           Span<const DevicePtr> bindings) {
  // Only host executables reach a host queue (the host device made them).
  const auto& host = static_cast<const HostExecutable&>(executable);
  DispatchContext ctx{host.entry(entry), bindings.data()};
  pool_.ParallelFor(static_cast<uint32_t>(workgroups.total()), RunWorkgroups, &ctx);
  if (HostKernelFault* fault = host.fault(); fault != nullptr && fault->kind != HostKernelFault::kNone) {
    HostKernelFault f = *fault;
    *fault = HostKernelFault{};
    return FaultError(host.entry_name(entry), f);
  }
  return Status::Ok();
}

Status HostQueue::Fill(DevicePtr target, uint64_t length, uint64_t pattern, uint8_t pattern_length) {
  HEXIR_RETURN_IF_ERROR(CheckFill(length, pattern_length));
  auto* dst = static_cast<unsigned char*>(target);
  if (pattern_length == 1) {
    std::memset(dst, static_cast<int>(pattern & 0xff), length);
    return Status::Ok();
  }
  for (uint64_t i = 0; i < length; i += pattern_length) std::memcpy(dst + i, &pattern, pattern_length);
  return Status::Ok();
}

Status HostQueue::Copy(CopyDirection, void* target, const void* source, uint64_t length) {
  // Host and device memory are the same memory: every direction is a memmove.
  std::memmove(target, source, length);
  return Status::Ok();
}

}  // namespace hexir::hal

// The CUDA emulator's alignment checks, end to end: a CUDA kernel with a planted misaligned
// vector load is emulated (EmulateGpuKernels), compiled for this CPU as the cuda-emulator target
// compiles it, loaded by the host HAL and dispatched; the dispatch fails naming the kernel, the
// binding, the byte offset and the thread. The same kernel reading aligned vectors runs.
#include <catch2/catch.hpp>

#include "Driver/Registration.h"
#include "Target/Cuda/Passes.h"
#include "Target/Host/HostCodegen.h"
#include "hal/host/host_device.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::hexir {
namespace {

// 16 threads of one block copy 64 floats, 4 per thread, each 4 as one 16-byte aligned vector:
// thread t reads x[4t + shift(t)], where shift(t) is 1 for thread `bad` only.
std::string kernel(int bad) {
  return R"mlir(
module attributes {gpu.container_module} {
  gpu.module @hexir_kernels {
    gpu.func @planted(%x: memref<68xf32>, %y: memref<64xf32>) kernel
        attributes {hexir.workgroup_size = 16 : i64, hexir.workgroups = 1 : i64} {
      %t = gpu.thread_id x
      %c4 = arith.constant 4 : index
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bad = arith.constant )mlir" +
         std::to_string(bad) + R"mlir( : index
      %is_bad = arith.cmpi eq, %t, %bad : index
      %shift = arith.select %is_bad, %c1, %c0 : index
      %i = arith.muli %t, %c4 : index
      %j = arith.addi %i, %shift : index
      %v = vector.load %x[%j] {alignment = 16} : memref<68xf32>, vector<4xf32>
      vector.store %v, %y[%i] {alignment = 16} : memref<64xf32>, vector<4xf32>
      gpu.return
    }
  }
}
)mlir";
}

// The planted kernel as a host kernel library, loaded by `device`.
std::unique_ptr<::hexir::hal::Executable> compile(MLIRContext &context, const std::string &text,
                                                  ::hexir::hal::Device &device) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  REQUIRE(module);
  HostTargetOptions host = hostTargetOptions(TargetOptions{});
  FailureOr<KernelPipelineOptions> pipeline = describeHostTarget(host, module->getLoc());
  REQUIRE(succeeded(pipeline));
  PassManager pm(&context);
  pm.addPass(createEmulateGpuKernels());
  buildHostLoopsToLLVMPipeline(pm, *pipeline);
  REQUIRE(succeeded(pm.run(*module)));
  KernelInfo info{"planted", 2, 1, 0, {68 * 4, 64 * 4}};
  FailureOr<::hexir::serializer::KernelLibrary> library =
      packageHostKernels(*module, {info}, host, module->getLoc());
  REQUIRE(succeeded(library));
  ::hexir::hal::ExecutableSource source;
  source.code = ::hexir::ByteSpan(library->code.data(), library->code.size());
  source.entry_names = {"planted"};
  auto loaded = device.LoadExecutable(source);
  REQUIRE(loaded.ok());
  return std::move(*loaded);
}

TEST_CASE("the CUDA emulator fails a misaligned vector access, naming the kernel and the address",
          "[cuda][emulator]") {
  DialectRegistry registry;
  registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  auto device = ::hexir::hal::CreateHostDevice();
  alignas(64) float x[68], y[64];
  for (int i = 0; i < 68; ++i)
    x[i] = static_cast<float>(i);
  ::hexir::hal::DevicePtr bindings[2] = {x, y};

  auto misaligned = compile(context, kernel(5), *device);
  ::hexir::Status status = device->queue().Dispatch(*misaligned, 0, {}, ::hexir::Span<const ::hexir::hal::DevicePtr>(bindings, 2));
  CHECK(status.code() == ::hexir::StatusCode::kInternal);
  // Thread 5 loads x[21..24]: byte 84 of binding 0.
  CHECK(status.message() == "kernel 'planted': misaligned 16-byte vector load at byte 0x54 of binding 0 "
                            "(block 0, thread 5); a GPU needs 16-byte alignment");

  auto aligned = compile(context, kernel(-1), *device);
  REQUIRE(device->queue().Dispatch(*aligned, 0, {}, ::hexir::Span<const ::hexir::hal::DevicePtr>(bindings, 2)).ok());
  for (int i = 0; i < 64; ++i)
    CHECK(y[i] == static_cast<float>(i));
}

} // namespace
} // namespace mlir::hexir

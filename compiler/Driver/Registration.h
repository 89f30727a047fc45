//===- Registration.h - dialects the compiler understands ------*- C++ -*-===//
#ifndef HEXIR_COMPILER_DRIVER_REGISTRATION_H
#define HEXIR_COMPILER_DRIVER_REGISTRATION_H

namespace mlir {
class DialectRegistry;
}

namespace mlir::hexir {
// Every dialect, interface and translation a Hexir compilation may meet.
void registerCompilerDialects(DialectRegistry &registry);
// Hexir passes and pipelines, plus MLIR's own passes (for hexir-opt).
void registerCompilerPasses();
} // namespace mlir::hexir

#endif // HEXIR_COMPILER_DRIVER_REGISTRATION_H

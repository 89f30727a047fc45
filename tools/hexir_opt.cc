// hexir-opt: mlir-opt with the Hexir dialect, passes and pipelines (for FileCheck tests).
#include "Driver/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::hexir::registerCompilerDialects(registry);
  mlir::hexir::registerCompilerPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "Hexir optimizer driver\n", registry));
}

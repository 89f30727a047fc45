# lit configuration for the compiler's FileCheck tests.
import os

import lit.formats

config.name = "Hexir compiler"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.hexir_build_dir, "compiler", "test")
config.substitutions.append(("%hexir-opt", os.path.join(config.hexir_tools_dir, "hexir-opt")))
config.substitutions.append(("%hexir-compile", os.path.join(config.hexir_tools_dir, "hexir-compile")))
config.substitutions.append(("%hexir-dump", os.path.join(config.hexir_tools_dir, "hexir-dump")))
config.environment["PATH"] = os.pathsep.join([config.llvm_tools_dir, config.environ_path])
config.substitutions.append(("%python", "/usr/bin/python3"))

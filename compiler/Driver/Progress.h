//===- Progress.h - the phases of a long compile, said as it goes -*- C++ -*-===//
//
// A compile of a large model takes tens of seconds (DenseNet-201: 11 s, ViT-L: 13 s); silence
// for that long reads as a hang. hexir-compile says which phase it is in, with the time so far:
// always with --progress, and on a terminal once the compile has taken 2 s (a quick compile
// stays quiet, and a script's output is left alone).
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_DRIVER_PROGRESS_H
#define HEXIR_COMPILER_DRIVER_PROGRESS_H

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace llvm {
class raw_ostream;
}

namespace hexir::compiler {

class Progress {
public:
  enum class Mode { kNever, kAlways, kAfterDelay };
  // Lines go to `os` ("hexir-compile: 2.3 s: compiling kernels"); kAfterDelay starts them after
  // `delay` (the phase under way then, and every later one).
  Progress(llvm::raw_ostream &os, Mode mode, std::chrono::milliseconds delay = std::chrono::seconds(2));
  ~Progress();
  Progress(const Progress &) = delete;
  Progress &operator=(const Progress &) = delete;

  // A new phase begins ("importing model.onnx", "compiling 57 kernels").
  void phase(const std::string &name);

private:
  void say();  // under mu_

  llvm::raw_ostream &os_;
  Mode mode_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::string phase_;
  bool speaking_ = false, done_ = false;
  std::thread timer_;
};

} // namespace hexir::compiler

#endif // HEXIR_COMPILER_DRIVER_PROGRESS_H

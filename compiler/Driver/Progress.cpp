//===- Progress.cpp - the phases of a long compile, said as it goes -------===//
#include "Driver/Progress.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace hexir::compiler;

Progress::Progress(llvm::raw_ostream &os, Mode mode, std::chrono::milliseconds delay)
    : os_(os), mode_(mode), start_(std::chrono::steady_clock::now()) {
  speaking_ = mode == Mode::kAlways;
  if (mode != Mode::kAfterDelay)
    return;
  // After the delay, the phase under way is said, and every later one as it begins.
  timer_ = std::thread([this, delay] {
    std::unique_lock<std::mutex> lock(mu_);
    if (wake_.wait_for(lock, delay, [this] { return done_; }))
      return;
    speaking_ = true;
    say();
  });
}

Progress::~Progress() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  wake_.notify_all();
  if (timer_.joinable())
    timer_.join();
}

void Progress::phase(const std::string &name) {
  std::lock_guard<std::mutex> lock(mu_);
  phase_ = name;
  if (speaking_)
    say();
}

void Progress::say() {
  if (phase_.empty())
    return;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  os_ << "hexir-compile: " << llvm::format("%.1f", seconds) << " s: " << phase_ << "\n";
  os_.flush();
}

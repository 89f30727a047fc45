#include "serve/batcher.h"

#include <algorithm>
#include <cstring>

namespace hexir::serve {

Batcher::Batcher(std::vector<RunFn> runners, std::vector<TensorInfo> inputs, std::vector<TensorInfo> outputs,
                 BatchOptions options, Metrics::Model* stats)
    : inputs_(std::move(inputs)), outputs_(std::move(outputs)), options_(options), stats_(stats),
      runners_(std::move(runners)) {
  // The signature is the smallest bucket's: its leading dimension's rows share its bytes.
  for (const TensorInfo& t : inputs_) input_row_bytes_.push_back(t.byte_size / static_cast<uint64_t>(t.shape[0]));
  for (const TensorInfo& t : outputs_) output_row_bytes_.push_back(t.byte_size / static_cast<uint64_t>(t.shape[0]));
  for (const RunFn& run : runners_) threads_.emplace_back([this, &run] { Loop(run); });
}

Batcher::~Batcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  queued_.notify_all();
  for (std::thread& t : threads_) t.join();
}

int Batcher::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size());
}

Status Batcher::Run(int64_t rows, const std::vector<std::vector<unsigned char>>& inputs,
                    std::vector<std::vector<unsigned char>>* outputs, const RunOptions& control) {
  if (rows < 1 || rows > options_.max_batch)
    return InvalidArgumentError("a request of ", rows, " rows; this model takes 1 to ", options_.max_batch);
  Item item{rows, &inputs, outputs, Clock::now(), &control, Status::Ok()};
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) return FailedPreconditionError("the server is stopping");
  queue_.push_back(&item);
  queued_rows_ += rows;
  queued_.notify_all();  // a thread waiting for more rows, or an idle one
  // Waiting, the request gives up when its control says so (polled: a cancel flag notifies no
  // one); once taken into a batch, it waits for the batch.
  while (!item.done) {
    Clock::time_point wake = Clock::now() + std::chrono::milliseconds(20);
    if (control.deadline && *control.deadline < wake) wake = *control.deadline;
    done_.wait_until(lock, wake, [&] { return item.done; });
    if (item.done) break;
    auto waiting = std::find(queue_.begin(), queue_.end(), &item);
    if (waiting == queue_.end()) continue;  // in a batch now
    Status stop = control.cancelled() ? CancelledError("the request was cancelled while it waited for a batch")
                  : control.expired() ? DeadlineExceededError("the request passed its deadline while it waited for a batch")
                                      : Status::Ok();
    if (!stop.ok()) {
      queue_.erase(waiting);
      queued_rows_ -= rows;
      return stop;
    }
  }
  return item.status;
}

void Batcher::Loop(const RunFn& run) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    queued_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    // Wait for a full batch, or until the oldest request has waited the delay.
    Clock::time_point deadline = queue_.front()->queued + std::chrono::microseconds(options_.delay_us);
    queued_.wait_until(lock, deadline, [&] { return stopping_ || queue_.empty() || queued_rows_ >= options_.max_batch; });
    if (queue_.empty()) continue;  // another thread took them
    std::vector<Item*> batch;
    int64_t rows = 0;
    while (!queue_.empty() && rows + queue_.front()->rows <= options_.max_batch) {
      rows += queue_.front()->rows;
      queued_rows_ -= queue_.front()->rows;
      batch.push_back(queue_.front());
      queue_.pop_front();
    }
    lock.unlock();
    RunBatch(run, batch);
    lock.lock();
    for (Item* item : batch) item->done = true;
    done_.notify_all();
  }
}

void Batcher::RunBatch(const RunFn& run, std::vector<Item*>& batch) {
  Clock::time_point start = Clock::now();
  int64_t rows = 0;
  double queued_s = 0;
  for (Item* item : batch) {
    rows += item->rows;
    queued_s += std::chrono::duration<double>(start - item->queued).count();
  }
  // Inputs stacked along the leading axis, in the order of the batch.
  std::vector<std::vector<unsigned char>> stacked(inputs_.size());
  std::vector<std::vector<int64_t>> in_shapes(inputs_.size()), out_shapes(outputs_.size());
  std::vector<TensorView> ins;
  for (size_t k = 0; k < inputs_.size(); ++k) {
    stacked[k].resize(static_cast<size_t>(rows) * input_row_bytes_[k]);
    size_t at = 0;
    for (Item* item : batch) {
      const std::vector<unsigned char>& part = (*item->inputs)[k];
      std::memcpy(stacked[k].data() + at, part.data(), part.size());
      at += part.size();
    }
    in_shapes[k] = inputs_[k].shape;
    in_shapes[k][0] = rows;
    ins.push_back({stacked[k].data(), inputs_[k].element_type, Span<const int64_t>(in_shapes[k])});
  }
  // The batch runs until its last request's deadline (none if any has none), with the cap on
  // loop trips every request of a server shares.
  RunOptions control;
  control.max_loop_trips = batch.front()->control->max_loop_trips;
  bool bounded = true;
  for (Item* item : batch) {
    bounded &= item->control->deadline.has_value();
    if (item->control->deadline && (!control.deadline || *item->control->deadline > *control.deadline))
      control.deadline = item->control->deadline;
  }
  if (!bounded) control.deadline.reset();
  std::vector<std::vector<unsigned char>> results(outputs_.size());
  std::vector<MutableTensorView> outs;
  for (size_t k = 0; k < outputs_.size(); ++k) {
    results[k].assign(static_cast<size_t>(rows) * output_row_bytes_[k], 0);
    out_shapes[k] = outputs_[k].shape;
    out_shapes[k][0] = rows;
    outs.push_back({results[k].data(), outputs_[k].element_type, Span<const int64_t>(out_shapes[k])});
  }
  Status ran = run(Span<const TensorView>(ins.data(), ins.size()),
                   Span<const MutableTensorView>(outs.data(), outs.size()), control);
  double compute_s = std::chrono::duration<double>(Clock::now() - start).count();
  // Each request's rows of every output, in the order the inputs were stacked.
  std::vector<size_t> at(outputs_.size(), 0);
  for (Item* item : batch) {
    item->status = ran;
    if (!ran.ok()) continue;
    item->outputs->resize(outputs_.size());
    for (size_t k = 0; k < outputs_.size(); ++k) {
      size_t bytes = static_cast<size_t>(item->rows) * output_row_bytes_[k];
      (*item->outputs)[k].assign(results[k].begin() + static_cast<std::ptrdiff_t>(at[k]),
                                 results[k].begin() + static_cast<std::ptrdiff_t>(at[k] + bytes));
      at[k] += bytes;
    }
  }
  if (stats_ != nullptr) Metrics::ObserveBatch(*stats_, rows, batch.size(), queued_s, compute_s);
}

}  // namespace hexir::serve

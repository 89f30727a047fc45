#include "serve/model_pool.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace hexir::serve {

namespace {

// Whether `session` runs `rows` rows along the leading axis of every input, giving as many
// rows of every output; the error says why not.
Status TakesRows(const Session& session, const ModelSignature& signature, int64_t rows) {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<TensorView> views;
  for (const TensorInfo& t : signature.inputs()) {
    if (t.shape.empty()) return InvalidArgumentError("input '", t.name, "' is a scalar: no batch axis");
    shapes.push_back(t.shape);
    shapes.back()[0] = rows;
  }
  for (size_t k = 0; k < shapes.size(); ++k)
    views.push_back({nullptr, signature.inputs()[k].element_type, Span<const int64_t>(shapes[k])});
  HEXIR_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> outputs,
                         session.OutputShapes(Span<const TensorView>(views.data(), views.size())));
  for (size_t k = 0; k < outputs.size(); ++k) {
    std::vector<int64_t> want = signature.outputs()[k].shape;
    if (want.empty() || outputs[k].empty() || outputs[k][0] != rows ||
        !std::equal(want.begin() + 1, want.end(), outputs[k].begin() + 1, outputs[k].end()))
      return InvalidArgumentError("output '", signature.outputs()[k].name, "' does not have ", rows,
                                  " rows for inputs of ", rows,
                                  " rows: batching needs a model compiled with shape buckets along its leading "
                                  "axis (hexir-compile --dim batch=1,4,16)");
  }
  return Status::Ok();
}

// Whether the model's constants and `sessions` arenas of `arena` bytes fit `budget`; the
// refusal gives the parts and what the compiler's plan says of the arena (its lower bound: the
// most bytes live at one point, which no plan goes under).
Status CheckBudget(const Module& module, int sessions, uint64_t arena, uint64_t budget) {
  uint64_t need = module.constant_bytes() + static_cast<uint64_t>(sessions) * arena;
  if (need <= budget) return Status::Ok();
  // The plan of the function with the largest arena (a session's arena is sized for it).
  std::string plan;
  uint64_t largest = 0;
  for (const std::string& function : module.function_names()) {
    StatusOr<std::string> text = module.plan_json(function);
    if (!text.ok()) continue;
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("arena_bytes") || !j["arena_bytes"].is_number_unsigned() ||
        !j.contains("lower_bound_bytes") || !j["lower_bound_bytes"].is_number_unsigned())
      continue;
    uint64_t bytes = j["arena_bytes"].get<uint64_t>();
    if (!plan.empty() && bytes < largest) continue;
    largest = bytes;
    plan = "; the compiler's plan of " + function + ": arena " + std::to_string(bytes) + " bytes, lower bound " +
           std::to_string(j["lower_bound_bytes"].get<uint64_t>()) +
           " (the most bytes live at one point of the run, which no plan goes under; quality " +
           (j.contains("quality") && j["quality"].is_string() ? j["quality"].get<std::string>() : "?") + ")";
  }
  return ResourceExhaustedError("needs ", need, " bytes: constants ", module.constant_bytes(), " + ", sessions,
                                " session(s) x arena ", arena, ", over its memory budget of ", budget, " bytes", plan,
                                ". Fewer --sessions, or a model whose plan fits");
}

}  // namespace

StatusOr<std::unique_ptr<ModelPool>> ModelPool::Create(const Runtime& runtime, const std::string& name,
                                                       const std::string& path, int sessions, int max_queue,
                                                       const BatchOptions& batch, LoadMode load_mode,
                                                       uint64_t memory_budget) {
  std::unique_ptr<ModelPool> pool(new ModelPool());
  pool->signature_.model_name = name;
  pool->max_queue_ = max_queue;
  ModuleOptions module_options;
  module_options.load_mode = load_mode;
  HEXIR_ASSIGN_OR_RETURN(pool->module_, Module::Load(runtime, path, module_options));
  HEXIR_ASSIGN_OR_RETURN(pool->signature_.input_info, pool->module_->inputs("main"));
  HEXIR_ASSIGN_OR_RETURN(pool->signature_.output_info, pool->module_->outputs("main"));
  pool->signature_.metadata = pool->module_->metadata();
  for (int i = 0; i < sessions; ++i) {
    HEXIR_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(pool->module_));
    if (i == 0 && memory_budget != 0)
      HEXIR_RETURN_IF_ERROR(CheckBudget(*pool->module_, sessions, session->arena_bytes(), memory_budget));
    pool->arena_bytes_ = session->arena_bytes();
    pool->free_.push_back(session.get());
    pool->sessions_.push_back(std::move(session));
  }
  if (batch.max_batch > 1) {
    // Requests share a batch only where one client's rows cannot change another's answer.
    if (std::string mixed = pool->module_->rows_mixed_by("main"); !mixed.empty())
      return InvalidArgumentError("--max-batch ", batch.max_batch, ": the rows of this model interact (", mixed,
                                  "): batching would make one request's answer depend on another's input");
    for (int64_t rows : {int64_t{1}, static_cast<int64_t>(batch.max_batch)}) {
      Status takes = TakesRows(*pool->sessions_.front(), pool->signature_, rows);
      if (!takes.ok())
        return InvalidArgumentError("--max-batch ", batch.max_batch, ": the model cannot run ", rows, " rows: ",
                                    takes.message());
    }
    pool->batch_ = batch;
    pool->signature_.max_batch = batch.max_batch;
  }
  return pool;
}

namespace {
// Why `control` stops a request now (OK: it does not).
Status StopStatus(const RunOptions& control) {
  if (control.cancelled()) return CancelledError("the request was cancelled");
  if (control.expired()) return DeadlineExceededError("the request passed its deadline");
  return Status::Ok();
}
}  // namespace

ModelPool::~ModelPool() { batcher_.reset(); }

void ModelPool::StartBatching(Metrics::Model* stats) {
  if (batch_.max_batch <= 1 || batcher_) return;
  stats->batching = true;
  std::vector<Batcher::RunFn> runners;
  for (const auto& session : sessions_)
    runners.push_back([s = session.get()](Span<const TensorView> in, Span<const MutableTensorView> out,
                                          const RunOptions& control) { return s->Run(in, out, control); });
  batcher_ = std::make_unique<Batcher>(std::move(runners), signature_.input_info, signature_.output_info, batch_, stats);
}

ModelPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->Release(session_);
}

ModelPool::Ticket::~Ticket() {
  if (pool_ == nullptr) return;
  std::lock_guard<std::mutex> lock(pool_->mu_);
  --pool_->in_flight_;
}

ModelPool::Ticket ModelPool::Admit() {
  std::lock_guard<std::mutex> lock(mu_);
  if (in_flight_ >= static_cast<int>(sessions_.size()) + max_queue_) return Ticket();
  ++in_flight_;
  return Ticket(this);
}

ModelPool::Lease ModelPool::Acquire(const Ticket& ticket, const RunOptions& control, Status* why) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!ticket) return Lease();
  if (free_.empty()) {
    ++waiting_;
    // Woken by a freed session; the cancel flag is polled (no one notifies it).
    while (free_.empty()) {
      Status stop = StopStatus(control);
      if (!stop.ok()) {
        --waiting_;
        if (why) *why = Status(stop.code(), "while waiting for a session: " + stop.message());
        return Lease();
      }
      auto wake = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
      if (control.deadline && *control.deadline < wake) wake = *control.deadline;
      freed_.wait_until(lock, wake);
    }
    --waiting_;
  }
  Session* session = free_.back();
  free_.pop_back();
  return Lease(this, session);
}

Status ModelPool::Infer(const Ticket& ticket, int64_t rows, const std::vector<std::vector<unsigned char>>& inputs,
                        std::vector<std::vector<unsigned char>>* outputs, const RunOptions& control) {
  if (batcher_) return batcher_->Run(rows, inputs, outputs, control);
  Status why = FailedPreconditionError("the request was not admitted");
  Lease session = Acquire(ticket, control, &why);
  if (!session) return why;
  std::vector<TensorView> ins;
  std::vector<MutableTensorView> outs;
  for (size_t k = 0; k < this->inputs().size(); ++k)
    ins.push_back({inputs[k].data(), this->inputs()[k].element_type, Span<const int64_t>(this->inputs()[k].shape)});
  outputs->assign(this->outputs().size(), {});
  for (size_t k = 0; k < this->outputs().size(); ++k) {
    (*outputs)[k].assign(this->outputs()[k].byte_size, 0);
    outs.push_back({(*outputs)[k].data(), this->outputs()[k].element_type, Span<const int64_t>(this->outputs()[k].shape)});
  }
  return session->Run(Span<const TensorView>(ins.data(), ins.size()),
                      Span<const MutableTensorView>(outs.data(), outs.size()), control);
}

void ModelPool::Release(Session* session) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(session);
  }
  freed_.notify_one();
}

int ModelPool::waiting() const {
  if (batcher_) return batcher_->waiting();
  std::lock_guard<std::mutex> lock(mu_);
  return waiting_;
}

}  // namespace hexir::serve

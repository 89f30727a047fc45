// The `hexir._hexir` extension module: pybind11 over the compiler library (compile) and the
// public runtime API (load, sessions, run). The pure-Python layer (python/hexir/__init__.py)
// gives it its documented shape (docs/python.md).
//
// Arrays: an input that is C-contiguous, of the declared dtype and aligned to its element size
// is bound without a copy; any other is converted once (numpy.ascontiguousarray with the
// declared dtype). Outputs are new arrays, or the caller's arrays when they have exactly the
// declared dtype and shape and are C-contiguous and writable. The GIL is released while
// compiling and running; runs of one session from several threads take turns.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <string>
#include <vector>

#include "Driver/Compile.h"
#include "base/file_mapping.h"
#include "hexir/hexir.h"
#include "llvm/Support/raw_ostream.h"

namespace py = pybind11;

namespace {

// Raised as hexir.Error subclasses by the Python layer: (status code name, message).
struct StatusError {
  std::string code, message;
};

[[noreturn]] void Throw(const hexir::Status& s) { throw StatusError{hexir::StatusCodeName(s.code()), s.message()}; }

py::dtype DtypeOf(hexir::ElementType t) {
  switch (t) {
    case hexir::ElementType::kF32: return py::dtype::of<float>();
    case hexir::ElementType::kF64: return py::dtype::of<double>();
    case hexir::ElementType::kI64: return py::dtype::of<int64_t>();
    case hexir::ElementType::kI32: return py::dtype::of<int32_t>();
    case hexir::ElementType::kI16: return py::dtype::of<int16_t>();
    case hexir::ElementType::kI8: return py::dtype::of<int8_t>();
    case hexir::ElementType::kU8: return py::dtype::of<uint8_t>();
    case hexir::ElementType::kU16: return py::dtype::of<uint16_t>();
    case hexir::ElementType::kU32: return py::dtype::of<uint32_t>();
    case hexir::ElementType::kU64: return py::dtype::of<uint64_t>();
    case hexir::ElementType::kBool: return py::dtype::of<bool>();
    case hexir::ElementType::kF16: return py::dtype("float16");
    case hexir::ElementType::kBF16: break;
  }
  throw StatusError{"UNIMPLEMENTED", std::string("element type ") + hexir::ElementTypeName(t) +
                                         " has no NumPy dtype"};
}

py::dict Describe(const hexir::TensorInfo& t) {
  py::dict d;
  d["name"] = t.name;
  d["shape"] = py::tuple(py::cast(t.shape));
  d["dtype"] = DtypeOf(t.element_type);
  return d;
}

// A function's inputs or outputs as a list of dicts, or the lookup's error raised.
py::list DescribeAll(const hexir::StatusOr<std::vector<hexir::TensorInfo>>& info) {
  if (!info.ok()) Throw(info.status());
  py::list l;
  for (const hexir::TensorInfo& t : info.value()) l.append(Describe(t));
  return l;
}

// The runtime a module was loaded with stays alive as long as the module or a session does.
struct PyModule {
  std::shared_ptr<hexir::Runtime> runtime;
  std::shared_ptr<const hexir::Module> module;
};

struct PySession {
  std::shared_ptr<hexir::Runtime> runtime;
  std::shared_ptr<const hexir::Module> module;
  std::unique_ptr<hexir::Session> session;
  std::vector<bool> last_copied;  // per input of the last run: converted (true) or read in place
  // Runs from several Python threads take turns: a session has one arena (Session::Run refuses
  // a concurrent run; Python users share objects, so they wait instead).
  std::shared_ptr<std::mutex> run_lock = std::make_shared<std::mutex>();
};

PyModule Load(const std::string& path, const std::string& device, int threads, bool copy, bool verify_weights) {
  hexir::RuntimeOptions options;
  options.device = device;
  options.threads = threads;
  auto runtime = hexir::Runtime::Create(options);
  if (!runtime.ok()) Throw(runtime.status());
  std::shared_ptr<hexir::Runtime> shared(std::move(*runtime));
  hexir::ModuleOptions module_options;
  module_options.load_mode = copy ? hexir::LoadMode::kCopy : hexir::LoadMode::kMap;
  module_options.verify_weights = verify_weights;
  auto module = hexir::Module::Load(*shared, path, module_options);
  if (!module.ok()) Throw(module.status());
  return PyModule{shared, *module};
}

PySession NewSession(const PyModule& m, const std::string& function, uint64_t memory_limit,
                     const std::vector<std::string>& functions) {
  hexir::SessionOptions options;
  options.function = function;
  options.functions = functions;
  options.memory_limit_bytes = memory_limit;
  auto session = hexir::Session::Create(m.module, options);
  if (!session.ok()) Throw(session.status());
  return PySession{m.runtime, m.module, std::move(*session), {}, std::make_shared<std::mutex>()};
}

// Runs `function` (empty: the session's default) with `inputs` (in signature order);
// `outputs[i]` is a caller array or None.
py::list Run(PySession& s, const std::vector<py::object>& inputs, const std::vector<py::object>& outputs,
             const std::string& function) {
  std::vector<hexir::TensorInfo> in_info = s.session->inputs(), out_info = s.session->outputs();
  if (!function.empty()) {
    auto ins = s.module->inputs(function);
    auto outs = s.module->outputs(function);
    if (!ins.ok()) Throw(ins.status());
    if (!outs.ok()) Throw(outs.status());
    in_info = std::move(*ins);
    out_info = std::move(*outs);
  }
  if (inputs.size() != in_info.size())
    throw StatusError{"INVALID_ARGUMENT", "the function takes " + std::to_string(in_info.size()) + " inputs, got " +
                                              std::to_string(inputs.size())};
  std::vector<py::array> keep_in, keep_out;
  std::vector<hexir::TensorView> in_views;
  std::vector<hexir::MutableTensorView> out_views;
  std::vector<std::vector<int64_t>> shapes;
  shapes.reserve(in_info.size() + out_info.size());
  std::vector<bool> copied(inputs.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    py::dtype dtype = DtypeOf(in_info[i].element_type);
    // Bound in place when C-contiguous, of the declared dtype and aligned; else one conversion.
    py::array a = py::array::ensure(inputs[i], py::array::c_style | py::array::forcecast);
    if (!a || !a.dtype().is(dtype)) a = py::array(py::module_::import("numpy").attr("ascontiguousarray")(inputs[i], dtype));
    copied[i] = a.ptr() != inputs[i].ptr();
    shapes.emplace_back(a.shape(), a.shape() + a.ndim());
    in_views.push_back({a.data(), in_info[i].element_type, hexir::Span<const int64_t>(shapes.back())});
    keep_in.push_back(std::move(a));
  }
  // The outputs' shapes follow the inputs' (a session of shape buckets takes several sizes).
  if (function.empty()) {
    auto shapes = s.session->OutputShapes(hexir::Span<const hexir::TensorView>(in_views.data(), in_views.size()));
    if (!shapes.ok()) Throw(shapes.status());
    for (size_t i = 0; i < out_info.size(); ++i) out_info[i].shape = (*shapes)[i];
  }
  for (size_t i = 0; i < out_info.size(); ++i) {
    py::dtype dtype = DtypeOf(out_info[i].element_type);
    py::array a;
    if (i < outputs.size() && !outputs[i].is_none()) {
      a = py::reinterpret_borrow<py::array>(outputs[i]);
      bool exact = py::isinstance<py::array>(outputs[i]) && a.dtype().is(dtype) && a.writeable() &&
                   (a.flags() & py::array::c_style) && static_cast<size_t>(a.ndim()) == out_info[i].shape.size() &&
                   std::equal(out_info[i].shape.begin(), out_info[i].shape.end(), a.shape());
      if (!exact)
        throw StatusError{"INVALID_ARGUMENT", "output " + std::to_string(i) + " '" + out_info[i].name + "' must be a " +
                                                  "writable C-contiguous array of " +
                                                  hexir::DescribeTensor(out_info[i].element_type,
                                                                        hexir::Span<const int64_t>(out_info[i].shape))};
    } else {
      a = py::array(dtype, out_info[i].shape);
    }
    shapes.emplace_back(out_info[i].shape);
    out_views.push_back({a.mutable_data(), out_info[i].element_type, hexir::Span<const int64_t>(shapes.back())});
    keep_out.push_back(std::move(a));
  }
  hexir::Status status;
  {
    // The GIL first, then the session's turn: a thread waiting for its turn holds no GIL.
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> turn(*s.run_lock);
    hexir::Span<const hexir::TensorView> in_span(in_views.data(), in_views.size());
    hexir::Span<const hexir::MutableTensorView> out_span(out_views.data(), out_views.size());
    status = function.empty() ? s.session->Run(in_span, out_span) : s.session->Run(function, in_span, out_span);
  }
  s.last_copied = std::move(copied);
  if (!status.ok()) Throw(status);
  py::list result;
  for (py::array& a : keep_out) result.append(a);
  return result;
}

// hexir-compile as a function: (executable bytes, diagnostics, plan table text).
py::tuple Compile(const std::string& path, const std::string& output, const std::map<std::string, std::vector<int64_t>>& shapes,
                  const std::string& entry, const std::string& target, const std::string& target_cpu,
                  const std::string& machine, const std::map<std::string, uint64_t>& budgets,
                  const std::map<std::string, std::string>& placements, bool fusion,
                  const std::string& plan_json, const std::string& plan_svg, const std::vector<std::string>& dims,
                  const std::vector<std::string>& donate, bool allow_tf32, int int8_kernels,
                  const std::string& precision,
                  const std::vector<std::tuple<std::string, bool, std::vector<int64_t>, std::vector<double>,
                                               std::vector<int64_t>>>& fix_inputs) {
  hexir::compiler::CompileOptions options;
  options.inputPath = path;
  options.inputShapes = shapes;
  // fix_inputs: (name, is_float, int values, float values, shape), from NumPy arrays.
  for (const auto& [name, is_float, ints, floats, shape] : fix_inputs) {
    hexir::onnx_import::FixedInput value;
    value.isFloat = is_float;
    value.ints = ints;
    value.floats = floats;
    value.hasShape = true;
    value.shape = shape;
    options.fixedInputs[name] = std::move(value);
  }
  for (const std::string& text : dims) {
    std::string error;
    if (!hexir::compiler::parseDim(text, options.dims, error)) return py::make_tuple(false, py::bytes(), error);
  }
  if (!entry.empty()) options.entries.push_back(entry);
  options.target = target;
  options.targetCpu = target_cpu;
  options.machine = machine;
  options.memoryBudgets = budgets;
  for (const auto& [what, space] : placements) {
    std::string error;
    if (!hexir::compiler::parsePlacement(what + "=" + space, options.placements, error))
      return py::make_tuple(false, py::bytes(), error);
  }
  options.fuseElementwise = fusion;
  options.planJsonPath = plan_json;
  options.planSvgPath = plan_svg;
  options.donated = donate;
  options.allowTf32 = allow_tf32;
  // -1 auto, 0 off, 1 on.
  options.int8Kernels = int8_kernels < 0    ? hexir::compiler::CompileOptions::Int8Kernels::kAuto
                        : int8_kernels == 0 ? hexir::compiler::CompileOptions::Int8Kernels::kOff
                                            : hexir::compiler::CompileOptions::Int8Kernels::kOn;
  options.precision = precision;
  std::vector<uint8_t> bytes;
  std::string diagnostics;
  bool ok;
  {
    py::gil_scoped_release release;
    llvm::raw_string_ostream os(diagnostics);
    ok = hexir::compiler::compileToBytes(options, bytes, os);
    os.flush();
  }
  if (ok && !output.empty()) {
    hexir::Status written = hexir::WriteFileAtomically(output, bytes.data(), bytes.size());
    if (!written.ok()) Throw(written);
  }
  return py::make_tuple(ok, py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size()), diagnostics);
}

}  // namespace

PYBIND11_MODULE(_hexir, m) {
  m.doc() = "Hexir: compile static graphs ahead of time and run them (see docs/python.md)";
  static py::exception<StatusError> base(m, "_StatusError");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      PyErr_SetObject(base.ptr(), py::make_tuple(e.code, e.message).ptr());
    }
  });
  m.def("compile", &Compile, py::arg("path"), py::arg("output"), py::arg("input_shapes"), py::arg("entry"),
        py::arg("target"), py::arg("target_cpu"), py::arg("machine"), py::arg("memory_budgets"), py::arg("placements"), py::arg("fusion"),
        py::arg("plan_json"), py::arg("plan_svg"), py::arg("dims"), py::arg("donate"), py::arg("allow_tf32"), py::arg("int8_kernels"),
        py::arg("precision"), py::arg("fix_inputs"));
  py::class_<PyModule>(m, "Module")
      .def("function_names", [](const PyModule& mod) { return mod.module->function_names(); })
      .def("inputs", [](const PyModule& mod, const std::string& fn) { return DescribeAll(mod.module->inputs(fn)); })
      .def("outputs", [](const PyModule& mod, const std::string& fn) { return DescribeAll(mod.module->outputs(fn)); })
      .def("plan_json",
           [](const PyModule& mod, const std::string& fn) {
             auto plan = mod.module->plan_json(fn);
             if (!plan.ok()) Throw(plan.status());
             return *plan;
           })
      .def_property_readonly("device", [](const PyModule& mod) { return mod.runtime->device_name(); })
      .def_property_readonly("constant_bytes", [](const PyModule& mod) { return mod.module->constant_bytes(); })
      .def_property_readonly("metadata", [](const PyModule& mod) { return mod.module->metadata(); });
  py::class_<PySession>(m, "Session")
      .def("run", &Run)
      .def_property_readonly("arena_bytes", [](const PySession& s) { return s.session->arena_bytes(); })
      .def_property_readonly("last_copied", [](const PySession& s) { return s.last_copied; })
      .def_property_readonly("runtime_live_buffers", [](const PySession& s) { return s.runtime->live_buffers(); });
  m.def("load", &Load, py::arg("path"), py::arg("device"), py::arg("threads"), py::arg("copy"),
        py::arg("verify_weights"));
  m.def("session", &NewSession, py::arg("module"), py::arg("function"), py::arg("memory_limit"),
        py::arg("functions"));
}

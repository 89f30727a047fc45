// hexir-run: loads a .hxb, binds .npy inputs, runs it on the host, writes or prints outputs.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "hal/host/host_device.h"
#include "serializer/executable_spec.h"
#include "tools/npy.h"
#include "vm/session.h"

namespace {

constexpr const char* kUsage =
    "usage: hexir-run MODEL.hxb [--function NAME] [--input NAME=FILE.npy]...\n"
    "                 [--output NAME=FILE.npy]... [--verify-weights]\n"
    "Runs the function (default 'main') on the host. Without --output, prints each output's\n"
    "name, shape, dtype and first values.\n";

int Fail(const std::string& message) {
  std::fprintf(stderr, "hexir-run: error: %s\n", message.c_str());
  return 1;
}

bool SplitAssignment(const std::string& text, std::string* name, std::string* path) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) return false;
  *name = text.substr(0, eq);
  *path = text.substr(eq + 1);
  return true;
}

void PrintArray(const std::string& name, const hexir::npy::Array& a) {
  std::string shape;
  for (size_t i = 0; i < a.shape.size(); ++i) shape += (i ? "x" : "") + std::to_string(a.shape[i]);
  std::printf("%s: %s %s [", name.c_str(), shape.empty() ? "scalar" : shape.c_str(),
              hexir::serializer::ElementTypeName(a.element_type));
  uint64_t n = a.element_count();
  uint64_t shown = n < 8 ? n : 8;
  for (uint64_t i = 0; i < shown; ++i) {
    if (a.element_type == hexir::ElementType::F32)
      std::printf("%s%.6g", i ? ", " : "", static_cast<const float*>(a.data())[i]);
  }
  std::printf("%s]\n", n > shown ? ", ..." : "");
}

}  // namespace

int main(int argc, char** argv) {
  std::string model, function = "main";
  std::map<std::string, std::string> input_files, output_files;
  hexir::ModuleOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    std::string name, path;
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--function") {
      const char* v = value("--function");
      if (!v) return Fail("--function needs a name");
      function = v;
    } else if (arg == "--input" || arg == "--output") {
      const char* v = value(arg.c_str());
      if (!v || !SplitAssignment(v, &name, &path)) return Fail(arg + " needs NAME=FILE.npy");
      auto& files = arg == "--input" ? input_files : output_files;
      if (!files.emplace(name, path).second) return Fail(arg + " '" + name + "' given twice");
    } else if (arg == "--verify-weights") {
      options.verify_weights = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return Fail("unknown option '" + arg + "'\n" + kUsage);
    } else if (model.empty()) {
      model = arg;
    } else {
      return Fail("more than one model given ('" + model + "' and '" + arg + "')");
    }
  }
  if (model.empty()) return Fail(std::string("no model given\n") + kUsage);

  auto device = hexir::hal::CreateHostDevice();
  auto module = hexir::Module::Load(model, device.get(), options);
  if (!module.ok()) return Fail(module.status().message());
  auto session = hexir::Session::Create(*module, function);
  if (!session.ok()) return Fail(session.status().message());
  const auto& fn = (*session)->function();

  std::vector<hexir::npy::Array> inputs;
  std::vector<hexir::TensorView> input_views;
  for (const auto* sig : *fn.inputs()) {
    auto it = input_files.find(sig->name()->str());
    if (it == input_files.end())
      return Fail("missing input '" + sig->name()->str() + "': pass --input " + sig->name()->str() + "=FILE.npy");
    auto array = hexir::npy::Read(it->second);
    if (!array.ok()) return Fail(array.status().message());
    inputs.push_back(std::move(*array));
    input_files.erase(it);
  }
  if (!input_files.empty()) {
    std::string names;
    for (const auto* sig : *fn.inputs()) names += (names.empty() ? "" : ", ") + sig->name()->str();
    return Fail("no input named '" + input_files.begin()->first + "' (inputs: " + names + ")");
  }
  for (const auto& a : inputs)
    input_views.push_back({a.data(), a.element_type, hexir::Span<const int64_t>(a.shape)});

  std::vector<hexir::npy::Array> outputs(fn.outputs()->size());
  std::vector<hexir::MutableTensorView> output_views;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto* sig = fn.outputs()->Get(i);
    outputs[i].element_type = sig->element_type();
    outputs[i].shape.assign(sig->shape()->begin(), sig->shape()->end());
    outputs[i].Resize(hexir::serializer::ExecutableView::TensorBytes(*sig));
  }
  for (auto& a : outputs)
    output_views.push_back({a.data(), a.element_type, hexir::Span<const int64_t>(a.shape)});
  for (const auto& [name, path] : output_files) {
    bool found = false;
    for (const auto* sig : *fn.outputs()) found |= sig->name()->str() == name;
    if (!found) return Fail("no output named '" + name + "'");
  }

  hexir::Status status = (*session)->Run(hexir::Span<const hexir::TensorView>(input_views),
                                         hexir::Span<const hexir::MutableTensorView>(output_views));
  if (!status.ok()) return Fail(status.message());

  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = fn.outputs()->Get(i)->name()->str();
    auto it = output_files.find(name);
    if (it != output_files.end()) {
      hexir::Status s = hexir::npy::Write(it->second, outputs[i]);
      if (!s.ok()) return Fail(s.message());
    } else if (output_files.empty()) {
      PrintArray(name, outputs[i]);
    }
  }
  return 0;
}

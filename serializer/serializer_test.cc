#include <catch2/catch.hpp>
#include <cstring>
#include <random>

#include "base/alignment.h"
#include "serializer/file_format.h"
#include "serializer/reader.h"
#include "serializer/writer.h"

namespace hexir::serializer {
namespace {

// A 8-byte aligned copy of a file image (the reader needs aligned bytes).
struct Image {
  explicit Image(const std::vector<uint8_t>& bytes) : words((bytes.size() + 7) / 8), size(bytes.size()) {
    if (!bytes.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
  }
  ByteSpan span() const { return ByteSpan(reinterpret_cast<const unsigned char*>(words.data()), size); }
  unsigned char* data() { return reinterpret_cast<unsigned char*>(words.data()); }
  std::vector<uint64_t> words;
  size_t size;
};

ExecutableSpec SampleSpec() {
  ExecutableSpec spec;
  spec.producer = "serializer_test";
  KernelLibrary lib;
  lib.code.assign(1000, 0xAB);
  lib.entries = {{"add", 3, 1, 0, {32, 32, 32}}, {"relu", 2, 1, 0, {32, 32}}};
  spec.libraries.push_back(lib);
  spec.constants.resize(64);
  for (size_t i = 0; i < 64; ++i) spec.constants[i] = static_cast<uint8_t>(i);
  Function fn;
  fn.name = "main";
  fn.inputs = {{"x", ElementType::F32, {2, 4}}};
  fn.outputs = {{"y", ElementType::F32, {2, 4}}};
  fn.arenas = {{0, 64, 64}};  // one 64-byte arena in memory space 0 (host)
  fn.commands.push_back(AllocCommand{0});
  DispatchCommand add;
  add.entry = 0;
  add.bindings = {{SlotKind::Input, 0, 0, 32}, {SlotKind::Constant, 0, 0, 32}, {SlotKind::Arena, 0, 0, 32}};
  add.num_inputs = 2;
  add.aliases = {-1};
  fn.commands.push_back(add);
  DispatchCommand relu;
  relu.entry = 1;
  relu.bindings = {{SlotKind::Arena, 0, 0, 32}, {SlotKind::Output, 0, 0, 32}};
  relu.num_inputs = 1;
  relu.aliases = {-1};
  fn.commands.push_back(relu);
  fn.commands.push_back(FillCommand{{SlotKind::Arena, 0, 32, 32}, 0x3f800000, 4});
  spec.functions.push_back(fn);
  return spec;
}

TEST_CASE("written executables read back", "[serializer]") {
  std::vector<uint8_t> bytes = WriteExecutable(SampleSpec());
  CHECK(bytes == WriteExecutable(SampleSpec()));  // deterministic
  Image image(bytes);
  auto view = ExecutableView::Open(image.span(), {/*verify_constants=*/true});
  REQUIRE(view.ok());
  const fb::Executable& exe = view->executable();
  CHECK(exe.format_version() == kFormatVersion);
  REQUIRE(exe.libraries()->size() == 1);
  CHECK(view->section(0).size() == 1000);
  CHECK(view->section(0)[999] == 0xAB);
  CHECK(IsAligned(exe.sections()->Get(0)->offset(), kSectionAlignment));
  CHECK(view->constants().size() == 64);
  CHECK(view->constants()[63] == 63);
  CHECK(IsAligned(exe.sections()->Get(1)->offset(), kConstantsAlignment));
  const fb::Function* fn = view->FindFunction("main");
  REQUIRE(fn != nullptr);
  CHECK(view->FindFunction("other") == nullptr);
  CHECK(fn->inputs()->Get(0)->name()->str() == "x");
  CHECK(ExecutableView::TensorBytes(*fn->inputs()->Get(0)) == 32);
  REQUIRE(fn->commands()->size() == 4);
  const auto* d = fn->commands()->Get(1)->op_as_DispatchCommand();
  REQUIRE(d != nullptr);
  CHECK(d->bindings()->Get(1)->kind() == fb::SlotKind::Constant);
  CHECK(fn->commands()->Get(3)->op_as_FillCommand()->pattern() == 0x3f800000);
  // Format 3: the target, its memory spaces, arenas naming theirs, library formats and
  // workgroup shapes.
  CHECK(exe.target()->str() == "host");
  REQUIRE(exe.memory_spaces()->size() == 1);
  CHECK(exe.memory_spaces()->Get(0)->name()->str() == "host");
  REQUIRE(fn->arenas()->size() == 1);
  CHECK((fn->arenas()->Get(0)->memory_space() == 0 && fn->arenas()->Get(0)->bytes() == 64));
  CHECK(exe.libraries()->Get(0)->format() == fb::KernelFormat::HostElf);
  CHECK(exe.libraries()->Get(0)->entries()->Get(0)->workgroup_size()->size() == 3);
  CHECK(fn->commands()->Get(0)->op_as_AllocCommand()->arena() == 0);
}

Status OpenSpec(const ExecutableSpec& spec) {
  Image image(WriteExecutable(spec));
  return ExecutableView::Open(image.span()).status();
}

TEST_CASE("structurally valid but inconsistent executables are refused", "[serializer]") {
  SECTION("arity mismatch") {
    ExecutableSpec spec = SampleSpec();
    std::get<DispatchCommand>(spec.functions[0].commands[1]).bindings.pop_back();
    Status s = OpenSpec(spec);
    CHECK(s.code() == StatusCode::kDataLoss);
    CHECK(s.message().find("has 2 bindings; the kernel takes 3") != std::string::npos);
  }
  SECTION("a binding smaller than the kernel's tensor") {
    // Inside its space, but the kernel writes 32 bytes: it would write past the slot.
    ExecutableSpec spec = SampleSpec();
    std::get<DispatchCommand>(spec.functions[0].commands[1]).bindings[2].length = 16;
    Status s = OpenSpec(spec);
    CHECK(s.code() == StatusCode::kDataLoss);
    CHECK(s.message().find("binds 16 bytes to binding 2; the kernel accesses 32") != std::string::npos);
  }
  SECTION("a kernel entry without binding sizes") {
    ExecutableSpec spec = SampleSpec();
    spec.libraries[0].entries[0].binding_bytes.clear();
    CHECK(OpenSpec(spec).message().find("does not give the size of each of its 3 bindings") != std::string::npos);
  }
  SECTION("slot outside the arena") {
    ExecutableSpec spec = SampleSpec();
    std::get<DispatchCommand>(spec.functions[0].commands[1]).bindings[2].offset = 40;
    CHECK(OpenSpec(spec).message().find("exceeds its space of 64 bytes") != std::string::npos);
  }
  SECTION("writing into an input") {
    ExecutableSpec spec = SampleSpec();
    std::get<DispatchCommand>(spec.functions[0].commands[2]).bindings[1] = {SlotKind::Input, 0, 0, 32};
    CHECK(OpenSpec(spec).message().find("writes into input 0") != std::string::npos);
  }
  SECTION("bad output index") {
    ExecutableSpec spec = SampleSpec();
    std::get<DispatchCommand>(spec.functions[0].commands[2]).bindings[1].index = 3;
    CHECK(OpenSpec(spec).message().find("output index 3 out of range") != std::string::npos);
  }
  SECTION("a slot of an arena the function does not have") {
    ExecutableSpec spec = SampleSpec();
    std::get<DispatchCommand>(spec.functions[0].commands[1]).bindings[2].index = 1;
    CHECK(OpenSpec(spec).message().find("arena 1 out of range (1 arenas)") != std::string::npos);
  }
  SECTION("ALLOC commands match the arenas: one each, before any use") {
    ExecutableSpec spec = SampleSpec();
    auto& commands = spec.functions[0].commands;
    commands.push_back(AllocCommand{0});
    CHECK(OpenSpec(spec).message() == "function 'main' command 4: ALLOC of arena 0 again (first at command 0)");
    commands.pop_back();
    std::swap(commands[0], commands[1]);  // the first dispatch writes arena 0 before its ALLOC
    CHECK(OpenSpec(spec).message() == "function 'main' command 0: uses arena 0 before its ALLOC command");
    commands.erase(commands.begin() + 1);
    commands.erase(commands.begin());
    commands.erase(commands.begin());
    commands.pop_back();  // no command uses or ALLOCs arena 0 now, but it has 64 bytes
    CHECK(OpenSpec(spec).message() == "function 'main': arena 0 of 64 bytes has no ALLOC command");
  }
  SECTION("an ALLOC of an arena the function does not have") {
    ExecutableSpec spec = SampleSpec();
    std::get<AllocCommand>(spec.functions[0].commands[0]).arena = 2;
    CHECK(OpenSpec(spec).message().find("ALLOC of arena 2 out of range") != std::string::npos);
  }
  SECTION("an arena in a memory space the executable does not name") {
    ExecutableSpec spec = SampleSpec();
    spec.functions[0].arenas[0].memory_space = 1;
    CHECK(OpenSpec(spec).message().find("arena 0 is in memory space 1; the executable has 1") != std::string::npos);
  }
  SECTION("two arenas, each checked against its own slots") {
    ExecutableSpec spec = SampleSpec();
    spec.memory_spaces.push_back({"device", false});
    spec.functions[0].arenas.push_back({1, 128, 64});  // no slot in it: larger than its slots
    auto& commands = spec.functions[0].commands;
    commands.insert(commands.begin() + 1, AllocCommand{1});
    CHECK(OpenSpec(spec).message().find("arena 1 of 128 bytes, but its slots end at 0") != std::string::npos);
    std::get<DispatchCommand>(spec.functions[0].commands[2]).bindings[2].index = 1;
    std::get<DispatchCommand>(spec.functions[0].commands[3]).bindings[0].index = 1;
    spec.functions[0].arenas[1].bytes = 64;
    CHECK(OpenSpec(spec).ok());  // arena 0 still holds the fill at [32, 64)
  }
  SECTION("no memory spaces, or constants in one that does not exist") {
    ExecutableSpec spec = SampleSpec();
    spec.constants_memory_space = 4;
    CHECK(OpenSpec(spec).message().find("the constants are in memory space 4; there are 1") != std::string::npos);
    spec.memory_spaces.clear();
    CHECK(OpenSpec(spec).message().find("names no memory space") != std::string::npos);
  }
  SECTION("a kernel library whose format is not its section's") {
    ExecutableSpec spec = SampleSpec();
    spec.libraries[0].format = KernelFormat::CudaPtx;
    CHECK(OpenSpec(spec).ok());  // written into a CudaPtx section: consistent
    Image image(WriteExecutable(spec));
    auto view = ExecutableView::Open(image.span());
    REQUIRE(view.ok());
    CHECK(view->executable().sections()->Get(0)->kind() == fb::SectionKind::CudaPtx);
    CHECK(view->executable().libraries()->Get(0)->compute_capability() == 0);
  }
  SECTION("a CUDA kernel's binding that does not start 16-byte aligned") {
    ExecutableSpec spec = SampleSpec();
    spec.libraries[0].format = KernelFormat::CudaPtx;
    spec.functions[0].arenas[0].bytes = 128;
    std::get<DispatchCommand>(spec.functions[0].commands[1]).bindings[2].offset = 40;
    CHECK(OpenSpec(spec).message().find("binds binding 2 at byte offset 40, not a multiple of the 16 bytes") !=
          std::string::npos);
    std::get<DispatchCommand>(spec.functions[0].commands[1]).bindings[2].offset = 48;
    CHECK(OpenSpec(spec).ok());
    spec.libraries[0].format = KernelFormat::HostElf;  // host kernels take any element-aligned binding
    std::get<DispatchCommand>(spec.functions[0].commands[1]).bindings[2].offset = 40;
    CHECK(OpenSpec(spec).ok());
  }
  SECTION("a CUDA kernel library records the compute capability it needs") {
    ExecutableSpec spec = SampleSpec();
    spec.libraries[0].format = KernelFormat::CudaPtx;
    spec.libraries[0].compute_capability = 86;
    Image image(WriteExecutable(spec));
    auto view = ExecutableView::Open(image.span());
    REQUIRE(view.ok());
    CHECK(view->executable().libraries()->Get(0)->compute_capability() == 86);
  }
  SECTION("a kernel entry without a workgroup shape") {
    ExecutableSpec spec = SampleSpec();
    spec.libraries[0].entries[1].workgroup_size = {1, 0, 1};
    CHECK(OpenSpec(spec).message().find("'relu' has no workgroup shape of 3 sizes from 1 to 1024") !=
          std::string::npos);
  }
  SECTION("an output signature larger than what the commands write") {
    // 4278190081x4 floats declared, 32 bytes written: callers would allocate 68 GB for nothing.
    ExecutableSpec spec = SampleSpec();
    spec.functions[0].outputs[0].shape = {4278190081, 4};
    CHECK(OpenSpec(spec).message().find("output 'y' declares 68451041296 bytes, but its commands write only its "
                                        "first 32") != std::string::npos);
    spec.functions[0].outputs[0].shape = {2, 5};  // 40 bytes: 8 never written
    CHECK(OpenSpec(spec).message().find("declares 40 bytes, but its commands write only its first 32") !=
          std::string::npos);
  }
  SECTION("constant widenings") {
    // Two f16 values widened to [0, 8) of a 64-byte FilledConstant space: fine; then each field
    // out of range.
    auto widened = [](ConstantWideningSpec w, uint64_t filled = 64) {
      ExecutableSpec spec = SampleSpec();
      spec.narrow_constants.assign(4, 0x3c);
      spec.filled_constants_bytes = filled;
      spec.constant_widenings = {w};
      return OpenSpec(spec);
    };
    CHECK(widened({0, 0, 2, 0}).ok());
    CHECK(widened({0, 56, 2, 1}).ok());
    CHECK(widened({2, 0, 2, 0}).message().find("exceeds the narrow constants of 4 bytes") != std::string::npos);
    CHECK(widened({0, 60, 2, 0}).message().find("filled constants of 64 bytes") != std::string::npos);
    CHECK(widened({0, 2, 1, 0}).message().find("misaligned") != std::string::npos);
    CHECK(widened({0, 0, 2, 7}).message().find("format 7") != std::string::npos);
    CHECK(widened({0, 0, uint64_t{1} << 62, 0}).message().find("constant widening 0") != std::string::npos);
    CHECK(widened({0, 0, 2, 0}, 192).message().find("but the fills end at 8") != std::string::npos);
  }
  SECTION("bad fill pattern") {
    ExecutableSpec spec = SampleSpec();
    std::get<FillCommand>(spec.functions[0].commands[3]).pattern_length = 3;
    CHECK(OpenSpec(spec).message().find("pattern length 3") != std::string::npos);
  }
}

// Shape buckets (hexir-compile --dim): a group's members name the same dimensions, take the
// same tensors, fix distinct sizes, and the group is not also a function.
TEST_CASE("shape bucket groups are checked", "[serializer]") {
  auto buckets = [](std::vector<std::pair<std::string, std::vector<std::pair<std::string, int64_t>>>> members) {
    ExecutableSpec spec = SampleSpec();
    Function base = spec.functions[0];
    spec.functions.clear();
    for (const auto& [name, dims] : members) {
      Function fn = base;
      fn.name = name;
      fn.bucket_of = "model";
      fn.bucket_dims = dims;
      spec.functions.push_back(fn);
    }
    return spec;
  };
  ExecutableSpec good = buckets({{"model_batch1", {{"batch", 1}}}, {"model_batch4", {{"batch", 4}}}});
  CHECK(OpenSpec(good).ok());
  auto refused = [](const ExecutableSpec& spec, const std::string& text) {
    Status s = OpenSpec(spec);
    INFO(s.message());
    CHECK(s.code() == StatusCode::kDataLoss);
    CHECK(s.message().find(text) != std::string::npos);
  };
  refused(buckets({{"a", {{"batch", 1}}}, {"b", {{"seq", 4}}}}),
          "shape buckets 'a' and 'b' of 'model' differ in their dimensions or tensors");
  refused(buckets({{"a", {{"batch", 2}}}, {"b", {{"batch", 2}}}}), "two shape buckets of 'model' fix the same dimensions");
  refused(buckets({{"a", {{"batch", 0}}}}), "function 'a' fixes dimension 'batch' to 0");
  refused(buckets({{"a", {}}}), "function 'a' is a shape bucket without a group or dimensions");
  ExecutableSpec named = buckets({{"model", {{"batch", 1}}}});
  refused(named, "shape bucket group 'model' is also the name of a function");
  ExecutableSpec other_tensors = good;
  other_tensors.functions[1].inputs[0].name = "z";
  refused(other_tensors, "differ in their dimensions or tensors");
}

TEST_CASE("truncated and corrupted files are refused and never crash", "[serializer]") {
  std::vector<uint8_t> bytes = WriteExecutable(SampleSpec());
  for (size_t len : {size_t{0}, size_t{10}, size_t{63}, size_t{64}, size_t{200}, bytes.size() - 1}) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + len);
    Image image(cut);
    CHECK_FALSE(ExecutableView::Open(image.span()).ok());
  }
  {
    // A flipped byte inside the code section is caught by its checksum.
    Image image(bytes);
    auto view = ExecutableView::Open(image.span());
    REQUIRE(view.ok());
    uint64_t code_at = view->executable().sections()->Get(0)->offset();
    image.data()[code_at + 500] ^= 0x01;
    Status s = ExecutableView::Open(image.span()).status();
    CHECK(s.code() == StatusCode::kDataLoss);
    CHECK(s.message().find("section 0 (HostCode) checksum mismatch") != std::string::npos);
  }
  {
    // A flipped constant is only caught when weights are verified on request.
    Image image(bytes);
    uint64_t const_at = ExecutableView::Open(image.span())->executable().sections()->Get(1)->offset();
    image.data()[const_at + 3] ^= 0x80;
    CHECK(ExecutableView::Open(image.span()).ok());
    CHECK(ExecutableView::Open(image.span(), {true}).status().message().find("(Constants) checksum") !=
          std::string::npos);
  }
  // Every single-byte flip outside the padding between sections is refused.
  Image pristine(bytes);
  const auto& sections = *ExecutableView::Open(pristine.span())->executable().sections();
  uint64_t meta_len = 0;
  std::memcpy(&meta_len, bytes.data() + offsetof(FileHeader, metadata_length), 8);
  std::mt19937 rng(7);
  for (size_t at = 0; at < bytes.size(); ++at) {
    bool checked = at < kHeaderSize + meta_len;
    for (const fb::SectionRef* s : sections)
      if (at >= s->offset() && at < s->offset() + s->length()) checked = true;
    if (!checked) continue;
    Image image(bytes);
    image.data()[at] ^= static_cast<unsigned char>(1 + rng() % 255);
    INFO("flipped byte " << at);
    CHECK_FALSE(ExecutableView::Open(image.span(), {true}).ok());
  }
}

}  // namespace
}  // namespace hexir::serializer

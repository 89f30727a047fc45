// Unit tests of the importer's constant folding and tensor reading. Expected values follow
// numpy's semantics (broadcasting, numpy.take, negative-step slices), worked out by hand.
#include <catch2/catch.hpp>

#include "Import/Onnx/HostTensor.h"
#include "Import/Onnx/NodeContext.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace hexir::onnx_import {
namespace {

HostTensor floats(std::vector<float> v, std::vector<int64_t> shape) {
  HostTensor t;
  t.f = std::move(v);
  t.shape = std::move(shape);
  return t;
}

TEST_CASE("broadcast shapes follow numpy", "[onnx]") {
  std::vector<int64_t> out;
  CHECK(broadcastShapes({2, 1, 4}, {3, 1}, out));
  CHECK(out == std::vector<int64_t>{2, 3, 4});
  CHECK(broadcastShapes({}, {5}, out));
  CHECK(out == std::vector<int64_t>{5});
  CHECK_FALSE(broadcastShapes({2, 3}, {4, 3}, out));
}

TEST_CASE("elementwise folding broadcasts and keeps integers exact", "[onnx]") {
  HostTensor a = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  HostTensor b = floats({10, 20}, {2, 1});
  HostTensor sum = foldElementwise({&a, &b}, DType::kFloat, [](auto &x) { return x[0] + x[1]; }, nullptr);
  CHECK(sum.shape == std::vector<int64_t>{2, 3});
  CHECK(sum.f == std::vector<float>{11, 12, 13, 24, 25, 26});
  // int64 shape arithmetic near 2^62 stays exact (no round trip through double).
  HostTensor big = HostTensor::fromInts({int64_t{1} << 62}, {1});
  HostTensor one = HostTensor::fromInts({1}, {});
  HostTensor r = foldElementwise({&big, &one}, DType::kInt64, nullptr, [](auto &x) { return x[0] + x[1]; });
  CHECK(r.i[0] == (int64_t{1} << 62) + 1);
}

TEST_CASE("gather takes along an axis with negative indices", "[onnx]") {
  HostTensor data = floats({0, 1, 2, 3, 4, 5}, {2, 3});
  HostTensor idx = HostTensor::fromInts({-1, 0}, {2});
  HostTensor r = gather(data, idx, 1);  // numpy.take(data, [-1, 0], axis=1)
  CHECK(r.shape == std::vector<int64_t>{2, 2});
  CHECK(r.f == std::vector<float>{2, 0, 5, 3});
  HostTensor scalar = HostTensor::fromInts({1}, {});
  HostTensor row = gather(data, scalar, 0);  // data[1]
  CHECK(row.shape == std::vector<int64_t>{3});
  CHECK(row.f == std::vector<float>{3, 4, 5});
}

TEST_CASE("slices with negative steps, concat, transpose and expand", "[onnx]") {
  HostTensor data = floats({0, 1, 2, 3, 4, 5}, {2, 3});
  HostTensor rev = slice(data, {1, 2}, {2, 2}, {-1, -2});  // data[::-1, ::-2]
  CHECK(rev.f == std::vector<float>{5, 3, 2, 0});
  HostTensor cat = concat({&data, &data}, 1);
  CHECK(cat.shape == std::vector<int64_t>{2, 6});
  CHECK(cat.f == std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  HostTensor t = transpose(data, {1, 0});
  CHECK(t.f == std::vector<float>{0, 3, 1, 4, 2, 5});
  HostTensor col = floats({7, 8}, {2, 1});
  HostTensor e = expand(col, {2, 3});
  CHECK(e.f == std::vector<float>{7, 7, 7, 8, 8, 8});
  HostTensor b = castTo(floats({0, 0.5f, -2}, {3}), DType::kBool);
  CHECK(b.i == std::vector<int64_t>{0, 1, 1});
}

TEST_CASE("element counts and float conversions never overflow", "[onnx]") {
  // An empty tensor counts 0 whatever its other dimensions multiply to, in any order.
  CHECK(elementCount({int64_t{1} << 37, int64_t{1} << 37, 0}) == 0);
  CHECK(elementCount({0, int64_t{1} << 62, int64_t{1} << 62}) == 0);
  CHECK(elementCount({int64_t{1} << 32, int64_t{1} << 32}) == INT64_MAX);
  CHECK(elementCount({}) == 1);
  CHECK(elementCount({2, 3, 4}) == 24);
  CHECK(foldable({int64_t{1} << 37, int64_t{1} << 37, 0}));
  CHECK(foldable({1 << 13, 1 << 14}));  // 2^27 elements: the bound itself
  CHECK_FALSE(foldable({1 << 13, (1 << 14) + 1}));
  CHECK_FALSE(foldable({int64_t{1} << 32, int64_t{1} << 32}));
  CHECK_FALSE(foldable({-1, 0}));
  // NaN and values out of int64's range: INT64_MIN, as cvttss2si and NumPy on x86.
  CHECK(floatToInt(std::nanf("")) == INT64_MIN);
  CHECK(floatToInt(1e30f) == INT64_MIN);
  CHECK(floatToInt(-1e30f) == INT64_MIN);
  CHECK(floatToInt(9223372036854775808.0f) == INT64_MIN);  // 2^63, just out of range
  CHECK(floatToInt(-9223372036854775808.0f) == INT64_MIN);  // -2^63, in range
  CHECK(floatToInt(-2.75f) == -2);
  CHECK(floatToInt(4611686018427387904.0f) == int64_t{1} << 62);
  HostTensor t = floats({std::nanf(""), 7.9f}, {2});
  CHECK(t.ints() == std::vector<int64_t>{INT64_MIN, 7});
}

TEST_CASE("tensors are read from raw data, typed fields and external files", "[onnx]") {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(2);
  float raw[2] = {1.5f, -2.0f};
  p.set_raw_data(std::string(reinterpret_cast<const char *>(raw), sizeof(raw)));
  std::string error;
  auto t = readTensor(p, "", error);
  REQUIRE(mlir::succeeded(t));
  CHECK(t->f == std::vector<float>{1.5f, -2.0f});

  onnx::TensorProto q;
  q.set_name("ids");
  q.set_data_type(onnx::TensorProto::INT64);
  q.add_dims(3);
  q.add_int64_data(4);
  q.add_int64_data(-1);
  auto u = readTensor(q, "", error);
  CHECK(mlir::failed(u));  // 2 values for 3 elements
  CHECK(error.find("holds 2 values, expected 3") != std::string::npos);

  // int8 values in int32_data are truncated to a byte, as raw bytes would hold them.
  onnx::TensorProto b;
  b.set_name("q");
  b.set_data_type(onnx::TensorProto::INT8);
  b.add_dims(3);
  for (int32_t v : {1000, -129, 5})
    b.add_int32_data(v);
  auto bytes = readTensor(b, "", error);
  REQUIRE(mlir::succeeded(bytes));
  CHECK(bytes->i == std::vector<int64_t>{-24, 127, 5});

  // An empty tensor's other dimensions are bounded too (folds multiply them).
  onnx::TensorProto z;
  z.set_name("z");
  z.set_data_type(onnx::TensorProto::FLOAT);
  z.add_dims(0);
  z.add_dims(int64_t{1} << 62);
  CHECK(mlir::failed(readTensor(z, "", error)));
  CHECK(error.find("tensor 'z' of shape 0x4611686018427387904 has dimensions whose product") != std::string::npos);

  // External data: offset and length inside a file beside the model.
  // In a fresh temporary directory, so that running the test from anywhere leaves nothing.
  std::string dir = (std::filesystem::temp_directory_path() /
                     ("hexir_hosttensor_test_" + std::to_string(::getpid())))
                        .string();
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir + "/weights.bin", std::ios::binary);
    float data[3] = {9, 1.5f, -2.0f};
    f.write(reinterpret_cast<const char *>(data), sizeof(data));
  }
  onnx::TensorProto e;
  e.set_name("ext");
  e.set_data_type(onnx::TensorProto::FLOAT);
  e.add_dims(2);
  e.set_data_location(onnx::TensorProto::EXTERNAL);
  auto *kv = e.add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  kv = e.add_external_data();
  kv->set_key("offset");
  kv->set_value("4");
  auto ext = readTensor(e, dir, error);
  REQUIRE(mlir::succeeded(ext));
  CHECK(ext->f == std::vector<float>{1.5f, -2.0f});
  kv->set_value("8");  // only 4 bytes left for 2 floats
  CHECK(mlir::failed(readTensor(e, dir, error)));
  CHECK(error.find("(offset 8, length 8) lies outside") != std::string::npos);
  kv->set_value("-4");
  CHECK(mlir::failed(readTensor(e, dir, error)));
  CHECK(error.find("has offset '-4', which is not a byte count") != std::string::npos);
  kv->set_value("4");
  kv = e.add_external_data();
  kv->set_key("length");
  kv->set_value("12");
  CHECK(mlir::failed(readTensor(e, dir, error)));
  CHECK(error.find("has length 12, but its shape and type take 8 bytes") != std::string::npos);
  kv->set_value("8");
  CHECK(mlir::succeeded(readTensor(e, dir, error)));
  e.mutable_external_data(0)->set_value("/etc/passwd");
  CHECK(mlir::failed(readTensor(e, dir, error)));
  CHECK(error.find("relative path inside the model's directory") != std::string::npos);
  e.mutable_external_data(0)->set_value("sub/../weights.bin");  // a ".." component
  CHECK(mlir::failed(readTensor(e, dir, error)));
  CHECK(error.find("relative path inside the model's directory") != std::string::npos);
  std::filesystem::create_directories(dir + "/sub");
  e.mutable_external_data(0)->set_value("sub");  // a directory
  CHECK(mlir::failed(readTensor(e, dir, error)));
  CHECK(error.find("is not a regular file") != std::string::npos);
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace hexir::onnx_import

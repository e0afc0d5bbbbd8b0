// test_safetensors.cpp: writing and reading safetensors files, single and sharded folders, and
// every error case of safetensors.h and model_weights.h with the file and tensor it must name.
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "errors.h"
#include "model_weights.h"
#include "safetensors.h"
#include "safetensors_writer.h"
#include "test_files.h"

using qwen3::DType;
using qwen3::ModelError;
using qwen3::ModelWeights;
using qwen3::SafetensorsFile;
using qwen3::TensorSpec;
using Kind = qwen3::ModelError::Kind;
namespace fs = std::filesystem;

namespace {

// Byte k of tensor i is (i * 16 + k) mod 251: every byte differs from its neighbours' tensors.
void write_pattern(const fs::path& path, const std::vector<TensorSpec>& specs) {
  qwen3::write_safetensors(path, specs, [](std::size_t i, std::uint64_t offset, std::span<std::byte> chunk) {
    for (std::size_t k = 0; k < chunk.size(); ++k) chunk[k] = static_cast<std::byte>((i * 16 + offset + k) % 251);
  });
}

std::vector<TensorSpec> two_tensors() {
  return {{"a.weight", DType::kBF16, {2, 3}}, {"b.bias", DType::kF32, {4}}};
}

void write_raw(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A file whose header is `header` (not padded) followed by `data_bytes` zero bytes.
std::string raw_file(const std::string& header, std::size_t data_bytes) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header + std::string(data_bytes, '\0');
}

// Runs f, which must throw a ModelError of `kind` whose message holds every one of `parts`.
template <class F>
void expect_error(F&& f, Kind kind, std::initializer_list<std::string> parts) {
  try {
    f();
    FAIL("no error");
  } catch (const ModelError& e) {
    INFO(e.what());
    CHECK(static_cast<int>(e.kind()) == static_cast<int>(kind));
    for (const std::string& p : parts) CHECK_THAT(e.what(), Catch::Contains(p));
  }
}

}  // namespace

TEST_CASE("safetensors: write then read", "[safetensors]") {
  fs::path path = qwen3::test::scratch_dir("st_roundtrip") / "t.safetensors";
  write_pattern(path, two_tensors());
  auto file = SafetensorsFile::open(path);
  REQUIRE(file->tensors().size() == 2);
  const qwen3::TensorInfo* a = file->find("a.weight");
  const qwen3::TensorInfo* b = file->find("b.bias");
  REQUIRE(a);
  REQUIRE(b);
  CHECK_FALSE(file->find("c"));
  CHECK(a->dtype == DType::kBF16);
  CHECK(a->shape == std::vector<std::int64_t>{2, 3});
  CHECK(a->numel() == 6);
  CHECK(a->shape_string() == "[2, 3]");
  CHECK(a->data.size() == 12);
  CHECK(b->dtype == DType::kF32);
  CHECK(b->data.size() == 16);
  CHECK(b->data.data() == a->data.data() + 12);  // packed in order
  CHECK(reinterpret_cast<std::uintptr_t>(a->data.data()) % 8 == 0);  // padded header: aligned data
  for (std::size_t k = 0; k < 16; ++k) CHECK(b->data[k] == static_cast<std::byte>((16 + k) % 251));
  CHECK(file->metadata().at("format") == "pt");
  CHECK(*a->file == path);
}

TEST_CASE("safetensors: damaged files name the file and tensor", "[safetensors]") {
  fs::path dir = qwen3::test::scratch_dir("st_errors");
  const std::string p = (dir / "x.safetensors").string();
  auto open = [&] { SafetensorsFile::open(p); };

  expect_error([&] { SafetensorsFile::open(dir / "absent.safetensors"); }, Kind::kMissingFile,
               {(dir / "absent.safetensors").string(), "cannot open"});

  // Truncated: the data of the last tensor is cut short.
  write_pattern(p, two_tensors());
  fs::resize_file(p, fs::file_size(p) - 3);
  expect_error(open, Kind::kTruncated, {p, "truncated", "tensor 'b.bias'", "ends at data byte 28"});
  write_raw(p, "abc");
  expect_error(open, Kind::kTruncated, {p, "less than the 8-byte header length"});
  write_raw(p, raw_file("{}", 0).substr(0, 9));  // header length 2, one byte of it present
  expect_error(open, Kind::kTruncated, {p, "the header needs 10 bytes but the file has 9"});

  // Malformed headers.
  write_raw(p, raw_file("{\"a\": [1,", 0));
  expect_error(open, Kind::kMalformed, {p, "the header is not valid JSON"});
  write_raw(p, raw_file("[1, 2]", 0));
  expect_error(open, Kind::kMalformed, {p, "not a JSON object"});
  write_raw(p, raw_file(R"({"w": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 2]}})", 2));
  expect_error(open, Kind::kMalformed, {p, "tensor 'w'", "unknown dtype \"Q4\""});
  write_raw(p, raw_file(R"({"w": {"dtype": "BF16", "shape": [3], "data_offsets": [0, 4]}})", 4));
  expect_error(open, Kind::kMalformed, {p, "tensor 'w'", "span 4 bytes", "needs 6"});
  write_raw(p, raw_file(R"({"w": {"dtype": "BF16", "shape": [-1], "data_offsets": [0, 2]}})", 2));
  expect_error(open, Kind::kMalformed, {p, "tensor 'w'", "not a non-negative integer"});
  write_raw(p, raw_file(R"({"w": {"dtype": "BF16", "shape": [1], "data_offsets": [4, 2]}})", 4));
  expect_error(open, Kind::kMalformed, {p, "tensor 'w'", "data_offsets"});
  write_raw(p, raw_file(R"({"w": {"dtype": "BF16", "shape": [2]}})", 4));
  expect_error(open, Kind::kMalformed, {p, "tensor 'w'", "needs \"dtype\", \"shape\" and \"data_offsets\""});
  write_raw(p, raw_file(R"({"u": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                            "v": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}})",
                        6));
  expect_error(open, Kind::kMalformed, {p, "tensors 'u' and 'v' overlap"});
  write_raw(p, raw_file(R"({"__metadata__": {"format": 1}})", 0));
  expect_error(open, Kind::kMalformed, {p, "__metadata__"});
  write_raw(p, raw_file(std::string(16, ' '), 0).replace(0, 8, "\xff\xff\xff\xff\xff\xff\xff\x7f", 8));
  expect_error(open, Kind::kMalformed, {p, "over the 100 MB limit"});
  // Empty tensors and an empty header are fine.
  write_raw(p, raw_file(R"({"e": {"dtype": "F32", "shape": [0, 5], "data_offsets": [0, 0]}})", 0));
  CHECK(SafetensorsFile::open(p)->find("e")->numel() == 0);
}

TEST_CASE("model weights: single file and shards", "[safetensors]") {
  fs::path single = qwen3::test::scratch_dir("weights_single");
  write_pattern(single / "model.safetensors", two_tensors());
  ModelWeights w = ModelWeights::open(single);
  CHECK(w.file_count() == 1);
  CHECK(w.get("b.bias").data.size() == 16);
  std::vector<std::int64_t> shape{2, 3};
  CHECK(w.get("a.weight", DType::kBF16, shape).numel() == 6);
  CHECK(ModelWeights::open(single / "model.safetensors").tensors().size() == 2);  // a file works too

  fs::path sharded = qwen3::test::scratch_dir("weights_sharded");
  write_pattern(sharded / "model-00001-of-00002.safetensors", {{"a.weight", DType::kBF16, {2, 3}}});
  write_pattern(sharded / "model-00002-of-00002.safetensors", {{"b.bias", DType::kF32, {4}}});
  nlohmann::json index = {{"metadata", {{"total_size", 28}}},
                          {"weight_map",
                           {{"a.weight", "model-00001-of-00002.safetensors"},
                            {"b.bias", "model-00002-of-00002.safetensors"}}}};
  std::ofstream(sharded / "model.safetensors.index.json") << index.dump();
  ModelWeights s = ModelWeights::open(sharded);
  CHECK(s.file_count() == 2);
  CHECK(s.get("a.weight").file->filename() == "model-00001-of-00002.safetensors");
  CHECK(s.get("b.bias").file->filename() == "model-00002-of-00002.safetensors");
}

TEST_CASE("model weights: errors name the file and tensor", "[safetensors]") {
  fs::path dir = qwen3::test::scratch_dir("weights_errors");
  expect_error([&] { ModelWeights::open(dir); }, Kind::kMissingFile,
               {dir.string(), "neither model.safetensors nor model.safetensors.index.json"});
  expect_error([&] { ModelWeights::open(dir / "nothing"); }, Kind::kMissingFile, {(dir / "nothing").string()});

  write_pattern(dir / "model.safetensors", two_tensors());
  ModelWeights w = ModelWeights::open(dir);
  std::vector<std::int64_t> good{2, 3}, bad{3, 2};
  expect_error([&] { w.get("c.weight"); }, Kind::kMissingTensor, {dir.string(), "missing tensor 'c.weight'",
                                                                  "model.safetensors"});
  expect_error([&] { w.get("a.weight", DType::kF16, good); }, Kind::kWrongDtype,
               {(dir / "model.safetensors").string(), "tensor 'a.weight' is BF16, expected F16"});
  expect_error([&] { w.get("a.weight", DType::kBF16, bad); }, Kind::kWrongShape,
               {(dir / "model.safetensors").string(), "tensor 'a.weight' has shape [2, 3], expected [3, 2]"});

  fs::path sharded = qwen3::test::scratch_dir("weights_shard_errors");
  write_pattern(sharded / "one.safetensors", {{"a.weight", DType::kBF16, {2, 3}}});
  auto write_index = [&](const nlohmann::json& map) {
    std::ofstream(sharded / "model.safetensors.index.json") << nlohmann::json{{"weight_map", map}}.dump();
  };
  write_index({{"a.weight", "one.safetensors"}, {"b.bias", "two.safetensors"}});
  expect_error([&] { ModelWeights::open(sharded); }, Kind::kMissingFile,
               {(sharded / "two.safetensors").string(), "'b.bias'", "model.safetensors.index.json"});
  write_index({{"a.weight", "one.safetensors"}, {"z.weight", "one.safetensors"}});
  expect_error([&] { ModelWeights::open(sharded); }, Kind::kMissingTensor,
               {(sharded / "one.safetensors").string(), "no tensor 'z.weight'"});
  write_pattern(sharded / "two.safetensors", {{"a.weight", DType::kBF16, {2, 3}}});
  write_index({{"a.weight", "one.safetensors"}, {"b.weight", "two.safetensors"}});
  expect_error([&] { ModelWeights::open(sharded); }, Kind::kMalformed, {"tensor 'a.weight' is also in"});
  std::ofstream(sharded / "model.safetensors.index.json") << "{\"weight_map\": 3}";
  expect_error([&] { ModelWeights::open(sharded); }, Kind::kMalformed, {"model.safetensors.index.json", "weight_map"});
}

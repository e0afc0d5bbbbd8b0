// test_files.h: where the qwen3 tests find their inputs and put their outputs.
//
// The real tokenizer files live outside the repository (CMake's QWEN3_TOKENIZER_DIR, overridden by
// the environment variable of the same name); a test that needs them calls qwen3_tokenizer(),
// which returns nullptr after a Catch2 WARN starting "skipped: " when they are missing (ctest then
// reports the test as skipped). The tokenizer is loaded once per process. Scratch files go under
// the build tree, one folder per test.
#pragma once

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "tokenizer.h"

namespace qwen3::test {

inline std::filesystem::path tokenizer_dir() {
  if (const char* env = std::getenv("QWEN3_TOKENIZER_DIR"); env && *env) return env;
  return QWEN3_TOKENIZER_DIR;
}

inline std::filesystem::path test_data_dir() { return QWEN3_TEST_DATA_DIR; }

// A fresh, empty folder for one test.
inline std::filesystem::path scratch_dir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(QWEN3_TEST_SCRATCH_DIR) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The real tokenizer, or nullptr (silently) when its file is missing.
inline const Tokenizer* qwen3_tokenizer_if_present() {
  static const std::unique_ptr<Tokenizer> tokenizer = []() -> std::unique_ptr<Tokenizer> {
    std::filesystem::path file = tokenizer_dir() / "tokenizer.json";
    if (!std::filesystem::exists(file)) return nullptr;
    return std::make_unique<Tokenizer>(Tokenizer::from_file(file));
  }();
  return tokenizer.get();
}

// The real tokenizer, or nullptr after the skip message.
inline const Tokenizer* qwen3_tokenizer() {
  const Tokenizer* tokenizer = qwen3_tokenizer_if_present();
  if (!tokenizer)
    WARN("skipped: no Qwen3 tokenizer.json in " << tokenizer_dir().string()
                                                << " (set QWEN3_TOKENIZER_DIR to the folder holding it)");
  return tokenizer;
}

}  // namespace qwen3::test

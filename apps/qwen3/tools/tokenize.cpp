// tokenize.cpp: qwen3-tokenize, the tokenizer on the command line, for checking it against
// Hugging Face `tokenizers` on any text.
//
//   qwen3-tokenize --tokenizer FILE [--as-text] [--json-lines] [TEXT]
// Encodes TEXT (or all of standard input) and prints the ids, one line, space-separated. With
// --json-lines every input line is a JSON string, and every output line the JSON array of its ids
// (an error object {"error": ...} for a text that cannot be encoded). --as-text encodes special
// tokens as ordinary text.
#include <fmt/format.h>

#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "errors.h"
#include "tokenizer.h"

int main(int argc, char** argv) {
  std::string file, text;
  bool json_lines = false, have_text = false;
  auto special = qwen3::SpecialTokens::kRecognize;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--tokenizer" && i + 1 < argc) {
      file = argv[++i];
    } else if (arg == "--json-lines") {
      json_lines = true;
    } else if (arg == "--as-text") {
      special = qwen3::SpecialTokens::kAsText;
    } else if (!arg.starts_with("--") && !have_text) {
      text = arg;
      have_text = true;
    } else {
      std::cerr << "usage: qwen3-tokenize --tokenizer FILE [--as-text] [--json-lines] [TEXT]\n";
      return 2;
    }
  }
  if (file.empty()) {
    std::cerr << "qwen3-tokenize: --tokenizer FILE (a tokenizer.json) is required\n";
    return 2;
  }
  try {
    qwen3::Tokenizer tokenizer = qwen3::Tokenizer::from_file(file);
    if (json_lines) {
      for (std::string line; std::getline(std::cin, line);) {
        try {
          std::cout << nlohmann::json(tokenizer.encode(nlohmann::json::parse(line).get<std::string>(), true, special))
                    << '\n';
        } catch (const std::exception& e) {
          std::cout << nlohmann::json{{"error", e.what()}} << '\n';
        }
      }
      return 0;
    }
    if (!have_text) text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    std::cout << fmt::format("{}\n", fmt::join(tokenizer.encode(text, true, special), " "));
  } catch (const qwen3::Error& e) {
    std::cerr << "qwen3-tokenize: " << e.what() << '\n';
    return 1;
  }
  return 0;
}

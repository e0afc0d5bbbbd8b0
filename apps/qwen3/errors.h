// errors.h: the exceptions of the Qwen3 engine.
//
// Everything a user can get wrong (a missing or damaged model folder, a tokenizer.json of another
// kind, an unsupported chat message, a token id outside the vocabulary, a generation longer than
// the context limit) is reported by throwing one of these, never by aborting. The
// message names the file and, where there is one, the tensor, and says what was expected;
// ModelError also carries a Kind so that callers and tests can tell the cases apart without
// parsing the text.
#pragma once

#include <stdexcept>
#include <string>

namespace qwen3 {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model folder problem: config.json, the safetensors files and their index.
class ModelError : public Error {
 public:
  enum class Kind {
    kMissingFile,      // a file the folder needs is not there or cannot be opened
    kMissingTensor,    // a tensor the model needs is in no file
    kWrongShape,       // a tensor has another shape than the config implies
    kWrongDtype,       // a tensor has another element type than expected
    kTruncated,        // the file ends before the data its header describes
    kMalformed,        // a header, index or config that cannot be parsed or is inconsistent
    kUnsupported,      // well formed, but a feature this engine does not implement
  };
  ModelError(Kind kind, const std::string& message) : Error(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// A generation that would not fit the model's context limit (the KV cache's positions).
class ContextLimitError : public Error {
 public:
  using Error::Error;
};

// A tokenizer.json this tokenizer cannot load, text it cannot encode (invalid UTF-8), an id it
// cannot decode, or a chat message it cannot render.
class TokenizerError : public Error {
 public:
  using Error::Error;
};

}  // namespace qwen3

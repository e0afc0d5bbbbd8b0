// ast.h: the parsed form of a kernel's serialized AST (docs/ast-format.md).
//
// The front end in include/tessera/ serializes a kernel into an S-expression at C++ compile time;
// parse_ast() turns that text back into a tree of Sexp nodes and checks its outline (params, body),
// so that codegen can walk it. Atoms are views into the original text, which must outlive the tree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/dtype.h"

namespace tessera::detail {

struct Sexp {
  bool is_list = false;
  char bracket = '(';          // '(' or '[' for lists
  std::string_view atom;       // for atoms
  std::string_view text;       // the node's whole source text (for memoizing identical subtrees)
  std::vector<Sexp> items;     // for lists

  const Sexp& operator[](std::size_t i) const;
  std::string_view head() const;  // first atom of a list ("" for atoms / empty lists)
  int64_t as_int() const;
};

struct ParamInfo {
  enum class Kind { out, in, scalar } kind;
  DType dtype;
  int rank = 0;
  std::vector<int64_t> tile;  // outputs only
};

struct KernelAst {
  std::string_view text;
  Sexp root;
  std::vector<ParamInfo> params;
  const Sexp* body = nullptr;  // the (body ...) list
  // Launch-time specialization, one letter per parameter (part of every cache key):
  // 'a' contiguous rows, 16-byte aligned base and row strides; 'c' contiguous rows; 's' strided;
  // '-' scalar. Empty means all 's'.
  std::string layouts;
};

// Parses and checks the outline; throws tessera::Error naming `kernel` on malformed text.
KernelAst parse_ast(std::string_view kernel, std::string_view text);

// A device function called by a kernel: (call TYPE NAME LANG HEX X...) nodes, code decoded.
struct DeviceFunctionUse {
  std::string name;
  bool is_ptx = false;
  std::string code;
};
// The distinct device functions the kernel's body calls, in first-use order; throws
// tessera::Error naming `kernel` when one name comes with two different codes or the
// node is malformed.
std::vector<DeviceFunctionUse> device_functions(std::string_view kernel, const KernelAst& ast);
DType parse_dtype(std::string_view kernel, std::string_view name);

}  // namespace tessera::detail

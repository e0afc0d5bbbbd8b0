// ast.h: the parsed form of a kernel's serialized AST (docs/ast-format.md).
//
// The front end in include/tessera/ serializes a kernel into an S-expression at C++ compile time;
// parse_ast() turns that text back into a DAG of Sexp nodes and checks every node against the
// grammar (ast_grammar.h), stamping its kind on it, so that the walkers read nodes through the
// typed views of ast_nodes.h and never meet a malformed one. Atoms are views into the original
// text, which must outlive the DAG.
//
// The DAG holds one node per distinct subtree: (let ID EXPR) and (ref TYPE ID) become one shared
// node, and so do identical subtrees of a plain tree, so that two nodes are the same node exactly
// when their texts, lets and refs written out, are equal. A walker of the DAG must therefore visit a
// shared node once (a set of visited nodes, or memoized results), or it costs the size of the tree,
// which may be exponential in the size of the text. Identical texts denote identical values, except
// that (iv ...) and (carried ...) name their loop by its depth: inside the bodies of two loops at
// the same depth one node denotes two values, so a walker that needs values (codegen) or loop
// bounds (WholeTiles) keeps what it learned of a node inside a loop body only until it leaves it.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/ast_grammar.h"
#include "llvm/ADT/iterator.h"
#include "llvm/ADT/iterator_range.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"

namespace tessera::detail {

// One node of the DAG: an atom, or a list of nodes with the kind its head names.
struct Sexp {
  bool is_list = false;
  char bracket = '(';                // '(' or '[' for lists
  NodeKind kind = NodeKind::none;    // lists in ( ): stamped by the parser (ast_grammar.h)
  bool is_integer = false;           // atoms: a decimal integer, whose value is `value`
  int64_t value = 0;
  std::string_view atom;             // for atoms
  std::string_view text;             // the source text of its first occurrence (for messages)
  std::vector<const Sexp*> items;    // for lists
  int depth = 0;                     // 0 for atoms, else 1 + the deepest item's depth

  // The items as references: for (const Sexp& c : n.children()).
  auto children() const { return llvm::make_pointee_range(items); }
  std::string_view head() const;  // first atom of a list ("" for atoms / empty lists)
};

struct ParamInfo {
  enum class Kind { out, in, scalar } kind;
  DType dtype;
  int rank = 0;
  std::vector<int64_t> tile;  // outputs only
};

// A parsed kernel: what the user's lambda says, nothing of a launch (the specialization a launch
// compiles it for is compiler/specialization.h's).
struct KernelAst {
  std::string_view text;
  std::shared_ptr<const std::deque<Sexp>> nodes;  // every node of the DAG, once; shared by copies
  const Sexp* root = nullptr;
  std::vector<ParamInfo> params;
  const Sexp* body = nullptr;  // the (body ...) node
};

// The deepest nesting that parse_ast accepts, counted through shared nodes (a ref is as deep as
// its let's expression). The front end's kernels nest a few levels per expression node and C++
// compilers bound constant evaluation at about 512 levels, so real kernels stay far below; the
// parser and the compiler's recursive walkers, which run on a stack of kCompilerStackBytes
// (compiler/pipeline.h), need well under that stack at this depth.
inline constexpr int kMaxAstDepth = 4096;

// Parses the text and checks it against the grammar; throws tessera::Error naming `kernel` on
// malformed text (nesting deeper than kMaxAstDepth included), a node that does not conform (named
// with its text), lets numbered out of order, refs to lets not yet seen or of another type, and
// parameters used as what they are not.
KernelAst parse_ast(std::string_view kernel, std::string_view text);

// A device function called by a kernel: (call TYPE NAME LANG HEX X...) nodes, code decoded.
struct DeviceFunctionUse {
  std::string name;
  bool is_ptx = false;
  std::string code;
};
// The distinct device functions the kernel's body calls, in first-use order; throws
// tessera::Error naming `kernel` when one name comes with two different codes.
std::vector<DeviceFunctionUse> device_functions(std::string_view kernel, const KernelAst& ast);
DType parse_dtype(std::string_view kernel, std::string_view name);
// The value of a (const TYPE 0xHEX) node's HEX: the bits of a double, 16 hex digits after "0x";
// throws tessera::Error naming `kernel` when malformed (the grammar's check of Item::hex).
double parse_const(std::string_view kernel, std::string_view hex);
// The same without a kernel: nullopt when malformed.
std::optional<double> hex_double(std::string_view hex);

}  // namespace tessera::detail

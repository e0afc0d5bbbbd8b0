// ast.h: the parsed form of a kernel's serialized AST (docs/ast-format.md).
//
// The front end in include/tessera/ serializes a kernel into an S-expression at C++ compile time;
// parse_ast() turns that text back into a DAG of Sexp nodes and checks its outline (params, body),
// so that codegen can walk it. Atoms are views into the original text, which must outlive the DAG.
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

#include "llvm/ADT/iterator_range.h"
#include "llvm/ADT/iterator.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"

namespace tessera::detail {

// Thrown by Sexp's accessors on a node of the wrong form. They do not know the kernel: every
// function that walks a kernel's tree (parse_ast, device_functions, generate_tile_ir, WholeTiles,
// the launcher's collectors) turns it into a tessera::Error naming the kernel (naming_kernel).
class MalformedNode : public Error {
 public:
  using Error::Error;
};

// Runs f(); a MalformedNode it throws becomes a tessera::Error naming the kernel, as parse_ast's
// errors: "tessera: kernel 'K': malformed AST (<what>)".
template <class F>
decltype(auto) naming_kernel(std::string_view kernel, F&& f) {
  try {
    return f();
  } catch (const MalformedNode& e) {
    throw Error("tessera: kernel '" + std::string(kernel) + "': malformed AST (" + e.what() + ")");
  }
}

struct Sexp {
  bool is_list = false;
  char bracket = '(';                // '(' or '[' for lists
  std::string_view atom;             // for atoms
  std::string_view text;             // the source text of its first occurrence (for messages)
  std::vector<const Sexp*> items;    // for lists
  int depth = 0;                     // 0 for atoms, else 1 + the deepest item's depth

  const Sexp& operator[](std::size_t i) const;
  // The items as references: for (const Sexp& c : n.children()).
  auto children() const { return llvm::make_pointee_range(items); }
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
  std::shared_ptr<const std::deque<Sexp>> nodes;  // every node of the DAG, once; shared by copies
  const Sexp* root = nullptr;
  std::vector<ParamInfo> params;
  const Sexp* body = nullptr;  // the (body ...) list
  // Launch-time specialization, one letter per parameter (part of every cache key):
  // 'a' contiguous rows, 16-byte aligned base and row strides; 'c' contiguous rows; 's' strided;
  // '-' scalar. Empty means all 's'.
  std::string layouts;
  // LaunchOptions::static_shapes: the tensors of the launch the kernel is compiled for, one entry
  // per parameter (empty sizes for scalars), and its grid of programs. Both empty when the kernel
  // is compiled for any shapes.
  struct StaticTensor {
    std::vector<int64_t> sizes, strides;
    int64_t offset = 0;
  };
  std::vector<StaticTensor> static_tensors;
  std::vector<int64_t> static_grid;
  // Compiled for launches whose every tile is whole (LaunchOptions::whole_tiles, checked by the
  // launcher with WholeTiles, compiler/whole_tiles.h): the kernel carries tile.whole_tiles.
  bool whole_tiles = false;
};

// The text of a launch's shapes in cache keys (see KernelAst::static_tensors): per parameter "-"
// (a scalar) or "OFFSET:S0xS1...:T0xT1..." (offset, sizes, strides), joined by ';', then
// "@G0,G1,G2" (the grid). parse_static_shapes reads it back into `ast`; it throws tessera::Error
// naming `kernel` on malformed text or a parameter count or rank that does not match.
void parse_static_shapes(std::string_view kernel, std::string_view text, KernelAst& ast);

// The deepest nesting that parse_ast accepts, counted through shared nodes (a ref is as deep as
// its let's expression). The front end's kernels nest a few levels per expression node and C++
// compilers bound constant evaluation at about 512 levels, so real kernels stay far below; the
// parser and the compiler's recursive walkers, which run on a stack of kCompilerStackBytes
// (compiler/pipeline.h), need well under that stack at this depth.
inline constexpr int kMaxAstDepth = 4096;

// Parses and checks the outline; throws tessera::Error naming `kernel` on malformed text (nesting
// deeper than kMaxAstDepth included), lets numbered out of order, refs to lets not yet seen or of
// another type.
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
// A load node, (load TYPE P IDX*), (load_like TYPE P Q) or (own TYPE Q), may end with an item
// (pad 0xHEX): the value its elements outside the tensor read as (docs/ast-format.md). Without one
// they read as zero. unpadded_size is the node's item count without that item; load_padding its
// value (nullopt: none), throwing tessera::Error naming `kernel` when the item is malformed.
bool is_padding_item(const Sexp& n);
std::size_t unpadded_size(const Sexp& n);
std::optional<double> load_padding(std::string_view kernel, const Sexp& n);
// The value of a (const TYPE 0xHEX) node's HEX: the bits of a double, 16 hex digits after "0x";
// throws tessera::Error naming `kernel` when malformed.
double parse_const(std::string_view kernel, std::string_view hex);

}  // namespace tessera::detail

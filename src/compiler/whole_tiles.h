// whole_tiles.h: whether every tile a launch reads or writes lies wholly inside its tensor, decided
// on the host from the kernel's AST before the kernel is looked up.
//
// A kernel accesses tiles through (load TYPE P IDX... PAD?), (load_like TYPE P Q PAD?), (own TYPE Q PAD?) and
// (store Q ...) (docs/ast-format.md). The tiles a program owns (load_like, own, store) are whole for
// every program when the tensor's sizes are at least the grid times the tile. A load's tile index
// IDX is an i32 expression; WholeTiles bounds each such expression over every program of the
// launch and every iteration of its loops by interval arithmetic (the interval holds every value
// the kernel can compute) and requires every tile between the bounds to lie inside the tensor.
// Index expressions may use constants, program ids and counts, tensor sizes, i32 scalar
// arguments, loop induction variables, neg, add, sub, mul, div (by a positive divisor), max and
// min. Anything else in an index (a loaded value, a select, a value a loop carries, a
// tessera::Scalar, which a graph replay may change) makes every launch answer no: such a kernel
// keeps its per-program tests.
//
// When the answer is yes, the launcher runs a variant compiled with that promise (the function
// attribute tile.whole_tiles): no bounds tests and no edge code. Assumes the kernel computes i32
// indices as the front end emits them (src/codegen/mlir_gen.cpp: wrapping add, sub and mul,
// division that never traps): an interval outside the i32 range answers no, as the kernel's value
// could have wrapped.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "frontend/ast.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "tessera/kernel.h"

namespace tessera::detail {

class WholeTiles {
 public:
  // Reads the kernel's accesses and their index expressions from `ast` (parsed, and so checked
  // against the grammar, by parse_ast).
  explicit WholeTiles(const KernelAst& ast);

  // True if every tile that a program of `grid` (programs along each axis) accesses lies wholly
  // inside its tensor, for these arguments. False for a kernel with an index it cannot bound, for
  // arguments that do not match the kernel's parameters (check_args then says why) and for an empty
  // grid.
  bool holds(std::span<const ArgDesc> args, const std::array<int64_t, 3>& grid) const;

  // Whether some launch could answer yes (no index the analysis cannot bound).
  bool analyzable() const { return analyzable_; }

 private:
  // One node of an index expression; operands come before their users in nodes_.
  struct Node {
    enum class Op : uint8_t { constant, program_id, num_programs, dim, arg, iv, neg, add, sub, mul, div, max, min };
    Op op = Op::constant;
    int64_t value = 0;  // constant; axis (program_id, num_programs, dim)
    int param = -1;     // the parameter (dim, arg)
    int a = -1, b = -1;  // operand nodes; iv: a = the node of the loop's trip count
  };
  // A (load TYPE P IDX...): P's tile of `tile` sizes at tile index (nodes[index[d]]...).
  struct Load {
    int param = 0;
    std::vector<int64_t> tile;
    std::vector<int> index;
  };
  // A tile at the program's own index (load_like, own, store): `param`'s tile of `tile` sizes.
  struct Owned {
    int param = 0;
    std::vector<int64_t> tile;
  };

  void walk(const Sexp& n);
  int index_node(const Sexp& n);  // -1 (and analyzable_ = false) for what the analysis cannot bound
  int new_index_node(const Sexp& n);
  int add_node(Node n);
  bool walked(const Sexp& n);             // whether walk() met n in this scope; marks it met
  int known_index(const Sexp& n) const;   // index_node(n) in this scope, or -1

  std::vector<ParamInfo> params_;
  std::vector<Node> nodes_;
  std::vector<Load> loads_;
  std::vector<Owned> owned_;
  std::vector<const Sexp*> loops_;      // the enclosing (for ...) nodes while walking, outermost first
  std::vector<int> loop_counts_;        // their trip-count nodes (-1 until an iv needs one)
  int64_t visible_loops_ = 0;           // the loops an iv may name: all, or those outside a count
  // What the walk learned of shared nodes, for the body and each enclosing loop body: valid
  // inside them, as (iv ...) in a node names its loop by depth.
  struct Scope {
    llvm::DenseSet<const Sexp*> walked;
    llvm::DenseMap<const Sexp*, int> indices;
  };
  std::vector<Scope> scopes_;
  bool analyzable_ = true;
};

}  // namespace tessera::detail

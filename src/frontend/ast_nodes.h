// ast_nodes.h: typed views of the AST's nodes, which read a node's items by their names in the
// grammar (ast_grammar.h): LoadNode(n).input(), LoadNode(n).indices(), LoadNode(n).padding().
//
// A view is a pointer to a node that parse_ast has checked against the grammar; constructing one
// of a node of another kind is a bug (asserted). Positions come from kGrammar at compile time
// (position() is consteval), so a change of the grammar table moves every accessor with it and
// a name the table lacks does not compile. Accessors do not fail: the parser rejected every node
// that does not conform, and every parameter a node names exists and is of the kind its field
// says (check_parameter_uses). Walkers that need to visit every node use subnodes().
#pragma once

#include <cassert>
#include <cstdint>
#include <optional>
#include <string_view>

#include "frontend/ast.h"
#include "frontend/ast_grammar.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace tessera::detail {

// The TYPE of an expression or a loop: DTYPE [DIM*] (no dims: a scalar).
struct NodeType {
  DType dtype = DType::f32;
  llvm::SmallVector<int64_t, 4> shape;
  bool operator==(const NodeType&) const = default;
};

// The nodes among n's items, in order: operands, a loop's groups, a kernel's parts; not its atoms,
// its TYPE's shape or its padding, which hold no node.
inline auto subnodes(const Sexp& n) {
  return llvm::make_filter_range(n.children(), [](const Sexp& c) {
    return c.is_list && c.kind != NodeKind::none && c.kind != NodeKind::pad;
  });
}

// A view of any checked node.
class NodeView {
 public:
  explicit NodeView(const Sexp& n) : n_(&n) {}
  const Sexp& sexp() const { return *n_; }
  NodeKind kind() const { return n_->kind; }
  std::string_view op() const { return n_->head(); }   // the head: "add", "load", ...
  std::string_view text() const { return n_->text; }  // for messages

 protected:
  const Sexp& item(std::size_t i) const { return *n_->items[i]; }
  int64_t integer(std::size_t i) const { return n_->items[i]->value; }
  std::string_view atom(std::size_t i) const { return n_->items[i]->atom; }
  // The items from position `from` to the end, less a trailing optional item of kind `optional`.
  llvm::ArrayRef<const Sexp*> items_from(std::size_t from, NodeKind optional = NodeKind::none) const {
    llvm::ArrayRef<const Sexp*> all = llvm::ArrayRef(n_->items).drop_front(from);
    return optional != NodeKind::none && !all.empty() && all.back()->kind == optional ? all.drop_back() : all;
  }
  // The trailing item if it is of kind k.
  const Sexp* trailing(NodeKind k) const {
    const Sexp* last = n_->items.back();
    return n_->items.size() > 1 && last->kind == k ? last : nullptr;
  }

 private:
  const Sexp* n_;
};

// A view of a node of kind K.
template <NodeKind K>
class KindView : public NodeView {
 public:
  explicit KindView(const Sexp& n) : NodeView(n) { assert(n.kind == K); }
};

// The TYPE of an expression or a loop.
NodeType type_of(const Sexp& n);
// Its dtype alone.
DType dtype_of(const Sexp& n);

// The value of a (pad 0xHEX) item of a load, load_like or own node; nullopt without one (the
// elements outside the tensor read as zero).
std::optional<double> padding_of(const Sexp& n);

class KernelNode : public KindView<NodeKind::kernel> {
 public:
  using KindView::KindView;
  // The parameter declarations, in order.
  auto params() const {
    return llvm::make_pointee_range(llvm::ArrayRef(item(position(NodeKind::kernel, "PARAMS")).items)
                                        .drop_front(position(NodeKind::params, "PARAM")));
  }
  const Sexp& body() const { return item(position(NodeKind::kernel, "BODY")); }
};

// (out DTYPE RANK [TILE*]), (in DTYPE RANK), (scalar DTYPE).
class ParamNode : public NodeView {
 public:
  explicit ParamNode(const Sexp& n) : NodeView(n) {
    assert(n.kind == NodeKind::out || n.kind == NodeKind::in || n.kind == NodeKind::scalar);
  }
  std::string_view dtype() const { return atom(position(NodeKind::scalar, "DTYPE")); }
  int64_t rank() const;  // 0 for a scalar
  llvm::SmallVector<int64_t, 4> tile() const;  // outputs only
};
static_assert(position(NodeKind::scalar, "DTYPE") == position(NodeKind::in, "DTYPE") &&
              position(NodeKind::in, "DTYPE") == position(NodeKind::out, "DTYPE") &&
              position(NodeKind::in, "RANK") == position(NodeKind::out, "RANK"));

class BodyNode : public KindView<NodeKind::body> {
 public:
  using KindView::KindView;
  auto statements() const {
    return llvm::make_pointee_range(items_from(position(NodeKind::body, "STMT")));
  }
};

class StoreNode : public KindView<NodeKind::store> {
 public:
  using KindView::KindView;
  int output() const { return static_cast<int>(integer(position(NodeKind::store, "P"))); }
  const Sexp& value() const { return item(position(NodeKind::store, "EXPR")); }
};

class LoadNode : public KindView<NodeKind::load> {
 public:
  using KindView::KindView;
  int input() const { return static_cast<int>(integer(position(NodeKind::load, "P"))); }
  // One i32 expression per dimension of the input: the tile index.
  auto indices() const {
    return llvm::make_pointee_range(items_from(position(NodeKind::load, "IDX"), NodeKind::pad));
  }
  std::optional<double> padding() const { return padding_of(sexp()); }
};

class LoadLikeNode : public KindView<NodeKind::load_like> {
 public:
  using KindView::KindView;
  int input() const { return static_cast<int>(integer(position(NodeKind::load_like, "P"))); }
  int output() const { return static_cast<int>(integer(position(NodeKind::load_like, "Q"))); }
  std::optional<double> padding() const { return padding_of(sexp()); }
};

class OwnNode : public KindView<NodeKind::own> {
 public:
  using KindView::KindView;
  int output() const { return static_cast<int>(integer(position(NodeKind::own, "Q"))); }
  std::optional<double> padding() const { return padding_of(sexp()); }
};

class ArgNode : public KindView<NodeKind::arg> {
 public:
  using KindView::KindView;
  int param() const { return static_cast<int>(integer(position(NodeKind::arg, "P"))); }
};

class DimNode : public KindView<NodeKind::dim> {
 public:
  using KindView::KindView;
  int param() const { return static_cast<int>(integer(position(NodeKind::dim, "P"))); }
  int64_t axis() const { return integer(position(NodeKind::dim, "D")); }
};

// (program_id TYPE D) and (num_programs TYPE D).
template <NodeKind K>
class GridAxisNode : public KindView<K> {
 public:
  using KindView<K>::KindView;
  int64_t axis() const { return this->integer(position(K, "D")); }
};
using ProgramIdNode = GridAxisNode<NodeKind::program_id>;
using NumProgramsNode = GridAxisNode<NodeKind::num_programs>;

class ConstNode : public KindView<NodeKind::constant> {
 public:
  using KindView::KindView;
  double value() const { return *hex_double(atom(position(NodeKind::constant, "0xHEX"))); }
};

// Nodes of one operand: (UNOP TYPE X), (cast TYPE X), (broadcast ...), (reshape ...), (transpose ...).
template <NodeKind K>
class OperandNode : public KindView<K> {
 public:
  using KindView<K>::KindView;
  const Sexp& operand() const { return this->item(position(K, "X")); }
};
using UnaryNode = OperandNode<NodeKind::unary>;
using CastNode = OperandNode<NodeKind::cast>;
using BroadcastNode = OperandNode<NodeKind::broadcast>;
using ReshapeNode = OperandNode<NodeKind::reshape>;
using TransposeNode = OperandNode<NodeKind::transpose>;

// (BINOP TYPE X Y) and (CMP TYPE X Y).
class BinaryNode : public NodeView {
 public:
  explicit BinaryNode(const Sexp& n) : NodeView(n) {
    assert(n.kind == NodeKind::binary || n.kind == NodeKind::compare);
  }
  const Sexp& lhs() const { return item(position(NodeKind::binary, "X")); }
  const Sexp& rhs() const { return item(position(NodeKind::binary, "Y")); }
};
static_assert(position(NodeKind::binary, "X") == position(NodeKind::compare, "X") &&
              position(NodeKind::binary, "Y") == position(NodeKind::compare, "Y"));

class SelectNode : public KindView<NodeKind::select> {
 public:
  using KindView::KindView;
  const Sexp& condition() const { return item(position(NodeKind::select, "C")); }
  const Sexp& if_true() const { return item(position(NodeKind::select, "X")); }
  const Sexp& if_false() const { return item(position(NodeKind::select, "Y")); }
};

class CallNode : public KindView<NodeKind::call> {
 public:
  using KindView::KindView;
  std::string_view name() const { return atom(position(NodeKind::call, "NAME")); }
  bool is_ptx() const { return atom(position(NodeKind::call, "LANG")) == "ptx"; }
  std::string_view code_hex() const { return atom(position(NodeKind::call, "HEX")); }
  std::string code() const;  // the code, decoded
  auto args() const { return llvm::make_pointee_range(items_from(position(NodeKind::call, "X"))); }
};

class ReduceNode : public KindView<NodeKind::reduce> {
 public:
  using KindView::KindView;
  std::string_view reduction() const { return atom(position(NodeKind::reduce, "KIND")); }  // sum, max, min
  int64_t axis() const { return integer(position(NodeKind::reduce, "AXIS")); }
  const Sexp& operand() const { return item(position(NodeKind::reduce, "X")); }
};

class MmaNode : public KindView<NodeKind::mma> {
 public:
  using KindView::KindView;
  const Sexp& a() const { return item(position(NodeKind::mma, "A")); }
  const Sexp& b() const { return item(position(NodeKind::mma, "B")); }
  const Sexp& accumulator() const { return item(position(NodeKind::mma, "C")); }
};

// (for TYPE ID N (INIT*) (YIELD*)): N and the inits are outside the loop, the yields inside.
class LoopNode : public KindView<NodeKind::loop> {
 public:
  using KindView::KindView;
  int64_t depth() const { return integer(position(NodeKind::loop, "ID")); }  // 0 = outermost
  const Sexp& trip_count() const { return item(position(NodeKind::loop, "N")); }
  auto inits() const { return item(position(NodeKind::loop, "INIT")).children(); }
  auto yields() const { return item(position(NodeKind::loop, "YIELD")).children(); }
  const Sexp& yields_group() const { return item(position(NodeKind::loop, "YIELD")); }
};

class IvNode : public KindView<NodeKind::iv> {
 public:
  using KindView::KindView;
  int64_t loop() const { return integer(position(NodeKind::iv, "ID")); }  // the loop's depth
};

class CarriedNode : public KindView<NodeKind::carried> {
 public:
  using KindView::KindView;
  int64_t loop() const { return integer(position(NodeKind::carried, "ID")); }
  int64_t index() const { return integer(position(NodeKind::carried, "K")); }
};

class ResultNode : public KindView<NodeKind::result> {
 public:
  using KindView::KindView;
  int64_t index() const { return integer(position(NodeKind::result, "K")); }
  const Sexp& loop() const { return item(position(NodeKind::result, "FOR")); }
};

}  // namespace tessera::detail

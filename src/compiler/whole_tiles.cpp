// whole_tiles.cpp: the host-side check that every tile of a launch is whole (see whole_tiles.h).
//
// The AST is walked once, when the launcher first meets the kernel: each access becomes a Load or
// an Owned entry, each index expression a list of Nodes. holds() then costs one pass over those
// nodes per launch (a few integer operations each). The walk visits a shared node of the DAG once
// per loop body (frontend/ast.h): a node met again inside the body it was met in, or inside a body
// within it, means the same tiles and index values.
#include "compiler/whole_tiles.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "frontend/ast_nodes.h"

namespace tessera::detail {
namespace {

constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();

// Whether an expression has the type of an index: "i32 []".
bool is_index_typed(const Sexp& n) {
  if (!is_expression(n.kind)) return false;
  const NodeType t = type_of(n);
  return t.dtype == DType::i32 && t.shape.empty();
}

}  // namespace

WholeTiles::WholeTiles(const KernelAst& ast) : params_(ast.params) {
  scopes_.emplace_back();
  if (ast.body) walk(*ast.body);
}

bool WholeTiles::walked(const Sexp& n) {
  for (const Scope& s : scopes_)
    if (s.walked.contains(&n)) return true;
  scopes_.back().walked.insert(&n);
  return false;
}

int WholeTiles::known_index(const Sexp& n) const {
  for (const Scope& s : scopes_)
    if (auto it = s.indices.find(&n); it != s.indices.end()) return it->second;
  return -1;
}

int WholeTiles::add_node(Node n) {
  nodes_.push_back(n);
  return static_cast<int>(nodes_.size()) - 1;
}

// The parser has checked every node's form and that each parameter a node names exists and is of
// the kind the node needs (ast_grammar.h); tile sizes are powers of two up to 2^31, so the products
// in holds() cannot overflow.
void WholeTiles::walk(const Sexp& n) {
  if (!analyzable_ || walked(n)) return;
  switch (n.kind) {
    case NodeKind::store: {
      const StoreNode store(n);
      owned_.push_back({store.output(), params_[store.output()].tile});
      walk(store.value());
      return;
    }
    case NodeKind::load: {
      // The (pad ...) item holds no index.
      const LoadNode load(n);
      const NodeType type = type_of(n);
      Load entry{load.input(), std::vector<int64_t>(type.shape.begin(), type.shape.end()), {}};
      for (const Sexp& i : load.indices()) entry.index.push_back(index_node(i));
      if (entry.index.size() != entry.tile.size()) analyzable_ = false;
      loads_.push_back(std::move(entry));
      return;
    }
    case NodeKind::load_like: {
      const LoadLikeNode like(n);
      owned_.push_back({like.input(), params_[like.output()].tile});
      return;
    }
    case NodeKind::own: {
      const OwnNode own(n);
      owned_.push_back({own.output(), params_[own.output()].tile});
      return;
    }
    case NodeKind::loop: {
      // N and the inits are outside the loop, the yields inside.
      const LoopNode loop(n);
      walk(loop.trip_count());
      for (const Sexp& init : loop.inits()) walk(init);
      loops_.push_back(&n);
      loop_counts_.push_back(-1);
      visible_loops_ = std::ssize(loops_);
      scopes_.emplace_back();
      for (const Sexp& y : loop.yields()) walk(y);
      scopes_.pop_back();
      loops_.pop_back();
      loop_counts_.pop_back();
      visible_loops_ = std::ssize(loops_);
      return;
    }
    default:
      for (const Sexp& item : subnodes(n)) walk(item);
  }
}

int WholeTiles::index_node(const Sexp& n) {
  if (const int known = known_index(n); known >= 0) return known;
  const int i = new_index_node(n);
  if (i >= 0) scopes_.back().indices[&n] = i;
  return i;
}

int WholeTiles::new_index_node(const Sexp& n) {
  const auto unknown = [&] {
    analyzable_ = false;
    return -1;
  };
  if (!is_index_typed(n) || !analyzable_) return unknown();
  using Op = Node::Op;
  const auto axis = [&](int64_t d) {
    if (d < 0 || d > 2) analyzable_ = false;
    return d;
  };
  switch (n.kind) {
    case NodeKind::constant: {
      const double v = ConstNode(n).value();
      if (!(v >= static_cast<double>(kI32Min) && v <= static_cast<double>(kI32Max))) return unknown();
      return add_node({Op::constant, static_cast<int64_t>(v)});
    }
    case NodeKind::program_id: return add_node({Op::program_id, axis(ProgramIdNode(n).axis())});
    case NodeKind::num_programs: return add_node({Op::num_programs, axis(NumProgramsNode(n).axis())});
    case NodeKind::dim: {
      const DimNode dim(n);
      return add_node({Op::dim, dim.axis(), dim.param()});
    }
    case NodeKind::arg: {
      const int p = ArgNode(n).param();
      if (params_[p].dtype != DType::i32) return unknown();
      return add_node({Op::arg, 0, p});
    }
    case NodeKind::iv: {
      // A trip count is computed outside its loop: while reading loop L's, only the loops
      // enclosing L are visible (a malformed count naming L's own variable would recurse forever).
      const int64_t id = IvNode(n).loop();
      if (id < 0 || id >= visible_loops_) return unknown();
      if (loop_counts_[id] < 0) {
        const int64_t outer = std::exchange(visible_loops_, id);
        loop_counts_[id] = index_node(LoopNode(*loops_[id]).trip_count());
        visible_loops_ = outer;
      }
      if (loop_counts_[id] < 0) return unknown();
      return add_node({Op::iv, 0, -1, loop_counts_[id]});
    }
    case NodeKind::unary: {
      const UnaryNode neg(n);
      if (neg.op() != "neg") return unknown();
      const int a = index_node(neg.operand());
      return a < 0 ? -1 : add_node({Op::neg, 0, -1, a});
    }
    case NodeKind::binary: {
      static constexpr std::pair<std::string_view, Op> kBinary[] = {
          {"add", Op::add}, {"sub", Op::sub}, {"mul", Op::mul}, {"div", Op::div}, {"max", Op::max}, {"min", Op::min}};
      const BinaryNode binary(n);
      for (auto [name, op] : kBinary) {
        if (binary.op() != name) continue;
        const int a = index_node(binary.lhs());
        const int b = a < 0 ? -1 : index_node(binary.rhs());
        return b < 0 ? -1 : add_node({op, 0, -1, a, b});
      }
      return unknown();
    }
    default: return unknown();
  }
}

bool WholeTiles::holds(std::span<const ArgDesc> args, const std::array<int64_t, 3>& grid) const {
  if (!analyzable_ || args.size() != params_.size()) return false;
  for (int64_t g : grid)
    if (g < 1 || g > kI32Max) return false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ParamInfo& p = params_[i];
    const bool scalar = p.kind == ParamInfo::Kind::scalar;
    if ((args[i].kind == ArgDesc::Kind::scalar) != scalar || (!scalar && args[i].rank != p.rank)) return false;
  }
  // Each node's interval [lo, hi], computed in order; none may leave the i32 range.
  struct Interval {
    int64_t lo, hi;
  };
  thread_local std::vector<Interval> at;  // the launch path's scratch, reused
  at.resize(nodes_.size());
  using Op = Node::Op;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    const Interval x = n.a >= 0 ? at[n.a] : Interval{}, y = n.b >= 0 ? at[n.b] : Interval{};
    Interval r{};
    switch (n.op) {
      case Op::constant: r = {n.value, n.value}; break;
      case Op::program_id: r = {0, grid[n.value] - 1}; break;
      case Op::num_programs: r = {grid[n.value], grid[n.value]}; break;
      case Op::dim: {
        const int64_t size = args[n.param].shape[n.value];
        r = {size, size};
        break;
      }
      case Op::arg: {
        // A tessera::Scalar may change between a graph's replays: its value bounds nothing.
        if (args[n.param].cell) return false;
        int32_t v = 0;
        std::memcpy(&v, args[n.param].scalar.data(), sizeof(v));
        r = {v, v};
        break;
      }
      case Op::iv: r = {0, std::max<int64_t>(x.hi - 1, 0)}; break;  // 0 .. N-1 (a loop of no iteration: 0)
      case Op::neg: r = {-x.hi, -x.lo}; break;
      case Op::add: r = {x.lo + y.lo, x.hi + y.hi}; break;
      case Op::sub: r = {x.lo - y.hi, x.hi - y.lo}; break;
      case Op::mul:
      case Op::div: {
        // Both are monotone in each operand over a divisor of one sign: the extremes are at corners.
        if (n.op == Op::div && y.lo < 1) return false;
        const auto f = [&](int64_t u, int64_t v) { return n.op == Op::mul ? u * v : u / v; };
        const int64_t c[] = {f(x.lo, y.lo), f(x.lo, y.hi), f(x.hi, y.lo), f(x.hi, y.hi)};
        r = {*std::min_element(std::begin(c), std::end(c)), *std::max_element(std::begin(c), std::end(c))};
        break;
      }
      case Op::max: r = {std::max(x.lo, y.lo), std::max(x.hi, y.hi)}; break;
      case Op::min: r = {std::min(x.lo, y.lo), std::min(x.hi, y.hi)}; break;
    }
    if (r.lo < kI32Min || r.hi > kI32Max) return false;
    at[i] = r;
  }
  for (const Load& load : loads_) {
    const ArgDesc& a = args[load.param];
    if (a.kind == ArgDesc::Kind::scalar || std::ssize(load.index) != a.rank) return false;
    for (std::size_t d = 0; d < load.index.size(); ++d) {
      const Interval i = at[load.index[d]];
      if (i.lo < 0 || (i.hi + 1) * load.tile[d] > a.shape[d]) return false;
    }
  }
  for (const Owned& own : owned_) {
    const ArgDesc& a = args[own.param];
    if (a.kind == ArgDesc::Kind::scalar || std::ssize(own.tile) != a.rank || a.rank > 3) return false;
    for (std::size_t d = 0; d < own.tile.size(); ++d)
      if (grid[d] * own.tile[d] > a.shape[d]) return false;
  }
  return true;
}

}  // namespace tessera::detail

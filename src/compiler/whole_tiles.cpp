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

namespace tessera::detail {
namespace {

constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();

// Whether (OP DTYPE [] ...) has the type of an index: "i32 []".
bool is_index_typed(const Sexp& n) {
  return n.is_list && n.items.size() >= 3 && !n[1].is_list && n[1].atom == "i32" && n[2].is_list &&
         n[2].bracket == '[' && n[2].items.empty();
}

// The tile sizes of a node's TYPE ("DTYPE [D0 D1 ...]" at items 1 and 2).
std::vector<int64_t> tile_of(const Sexp& n) {
  std::vector<int64_t> sizes;
  for (const Sexp& d : n[2].children()) sizes.push_back(d.as_int());
  return sizes;
}

// Tile sizes the products in holds() cannot overflow with (1 to 2^31; the compile rejects others).
bool tile_ok(const std::vector<int64_t>& tile) {
  return std::all_of(tile.begin(), tile.end(), [](int64_t d) { return d >= 1 && d <= (int64_t{1} << 31); });
}

}  // namespace

WholeTiles::WholeTiles(std::string_view kernel, const KernelAst& ast) : kernel_(kernel), params_(ast.params) {
  for (const ParamInfo& p : params_)
    if (!tile_ok(p.tile)) analyzable_ = false;
  scopes_.emplace_back();
  if (ast.body) naming_kernel(kernel, [&] { walk(*ast.body); });
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

void WholeTiles::walk(const Sexp& n) {
  if (!n.is_list || !analyzable_ || walked(n)) return;
  const std::string_view op = n.head();
  // A parameter index, or -1 (and analyzable_ = false) for a malformed one: the front end's own
  // checks reject the kernel then.
  const auto param_of = [&](const Sexp& p) -> int {
    const int64_t i = p.as_int();
    if (i < 0 || i >= std::ssize(params_)) {
      analyzable_ = false;
      return -1;
    }
    return static_cast<int>(i);
  };
  if (op == "store" && n.items.size() == 3) {
    const int q = param_of(n[1]);
    if (q < 0) return;
    owned_.push_back({q, params_[q].tile});
    walk(n[2]);
    return;
  }
  // Load nodes may end with a (pad ...) item, which holds no index.
  const std::size_t size = unpadded_size(n);
  if (op == "load" && size >= 4) {
    Load load{param_of(n[3]), tile_of(n), {}};
    if (load.param < 0 || !tile_ok(load.tile)) {
      analyzable_ = false;
      return;
    }
    for (std::size_t i = 4; i < size; ++i) load.index.push_back(index_node(n[i]));
    if (load.index.size() != load.tile.size()) analyzable_ = false;
    loads_.push_back(std::move(load));
    return;
  }
  if (op == "load_like" && size == 5) {
    const int p = param_of(n[3]), q = param_of(n[4]);
    if (p < 0 || q < 0) return;
    owned_.push_back({p, params_[q].tile});
    return;
  }
  if (op == "own" && size == 4) {
    const int q = param_of(n[3]);
    if (q < 0) return;
    owned_.push_back({q, params_[q].tile});
    return;
  }
  if (op == "load" || op == "load_like" || op == "own") {
    analyzable_ = false;  // malformed: the front end's own checks reject it
    return;
  }
  if (op == "for" && n.items.size() == 7) {
    // (for TYPE ID N (INIT*) (YIELD*)): N and the inits are outside the loop, the yields inside.
    walk(n[4]);
    walk(n[5]);
    loops_.push_back(&n);
    loop_counts_.push_back(-1);
    visible_loops_ = std::ssize(loops_);
    scopes_.emplace_back();
    walk(n[6]);
    scopes_.pop_back();
    loops_.pop_back();
    loop_counts_.pop_back();
    visible_loops_ = std::ssize(loops_);
    return;
  }
  for (const Sexp& item : n.children()) walk(item);
}

int WholeTiles::index_node(const Sexp& n) {
  if (const int known = known_index(n); known >= 0) return known;
  const int i = new_index_node(n);
  if (i >= 0) scopes_.back().indices[&n] = i;
  return i;
}

int WholeTiles::new_index_node(const Sexp& n) {
  const std::string_view op = n.head();
  const auto unknown = [&] {
    analyzable_ = false;
    return -1;
  };
  if (!is_index_typed(n) || !analyzable_) return unknown();
  using Op = Node::Op;
  const auto axis = [&](const Sexp& a) {
    const int64_t d = a.as_int();
    if (d < 0 || d > 2) analyzable_ = false;
    return d;
  };
  if (op == "const" && n.items.size() == 4) {
    if (n[3].is_list) return unknown();
    const double v = parse_const(kernel_, n[3].atom);
    if (!(v >= static_cast<double>(kI32Min) && v <= static_cast<double>(kI32Max))) return unknown();
    return add_node({Op::constant, static_cast<int64_t>(v)});
  }
  if (op == "program_id" && n.items.size() == 4) return add_node({Op::program_id, axis(n[3])});
  if (op == "num_programs" && n.items.size() == 4) return add_node({Op::num_programs, axis(n[3])});
  if (op == "dim" && n.items.size() == 5) {
    const int64_t p = n[3].as_int(), d = n[4].as_int();
    if (p < 0 || p >= std::ssize(params_) || params_[p].kind == ParamInfo::Kind::scalar || d < 0 ||
        d >= params_[p].rank)
      return unknown();
    return add_node({Op::dim, d, static_cast<int>(p)});
  }
  if (op == "arg" && n.items.size() == 4) {
    const int64_t p = n[3].as_int();
    if (p < 0 || p >= std::ssize(params_) || params_[p].kind != ParamInfo::Kind::scalar ||
        params_[p].dtype != DType::i32)
      return unknown();
    return add_node({Op::arg, 0, static_cast<int>(p)});
  }
  if (op == "iv" && n.items.size() == 4) {
    // A trip count is computed outside its loop: while reading loop L's, only the loops
    // enclosing L are visible (a malformed count naming L's own variable would recurse forever).
    const int64_t id = n[3].as_int();
    if (id < 0 || id >= visible_loops_) return unknown();
    if (loop_counts_[id] < 0) {
      const int64_t outer = std::exchange(visible_loops_, id);
      loop_counts_[id] = index_node((*loops_[id])[4]);
      visible_loops_ = outer;
    }
    if (loop_counts_[id] < 0) return unknown();
    return add_node({Op::iv, 0, -1, loop_counts_[id]});
  }
  if (op == "neg" && n.items.size() == 4) {
    const int a = index_node(n[3]);
    return a < 0 ? -1 : add_node({Op::neg, 0, -1, a});
  }
  static constexpr std::pair<std::string_view, Op> kBinary[] = {
      {"add", Op::add}, {"sub", Op::sub}, {"mul", Op::mul}, {"div", Op::div}, {"max", Op::max}, {"min", Op::min}};
  for (auto [name, binary] : kBinary) {
    if (op != name || n.items.size() != 5) continue;
    const int a = index_node(n[3]);
    const int b = a < 0 ? -1 : index_node(n[4]);
    return b < 0 ? -1 : add_node({binary, 0, -1, a, b});
  }
  return unknown();
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

// reference_interpreter.cpp: the host reference of generated kernels (see reference_interpreter.h).
//
// Values are whole tiles (row-major vectors of Elem) with the node's declared dtype and shape.
// Identical subtrees are evaluated once per scope (a loop body's scope lasts one iteration), as
// the compiler emits them once; the memo is cleared after each store, so that an (own ...) after
// a store reads the stored values.
#include "reference_interpreter.h"

#include <fmt/format.h>

#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "sexp.h"

namespace tessera::fuzz {
namespace {

using Shape = std::vector<int64_t>;

struct Val {
  DType dt = DType::f32;
  Shape shape;
  std::vector<Elem> x;
};

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Coordinates of flat index i in shape s (row-major).
Shape unravel(int64_t i, const Shape& s) {
  Shape c(s.size());
  for (std::size_t d = s.size(); d-- > 0;) {
    c[d] = i % s[d];
    i /= s[d];
  }
  return c;
}

[[noreturn]] void bad(std::string_view what, const SNode& n) {
  throw std::runtime_error(fmt::format("reference: {} in '{}'", what, n.text.substr(0, 200)));
}

DType dtype_of(const SNode& a) {
  for (DType d : {DType::f32, DType::f16, DType::bf16, DType::i32, DType::i1, DType::f8e4m3, DType::f8e5m2})
    if (a.atom == dtype_name(d)) return d;
  bad("unknown dtype", a);
}

class Interpreter {
 public:
  Interpreter(const FuzzCase& c, const OpContext& ctx) : c_(c), ctx_(ctx) {}

  std::vector<ExpectedStorage> run() {
    const SNode root = read_sexp(c_.ast);
    if (root.head() != "kernel" || root.size() != 3 || root[1].head() != "params" || root[2].head() != "body")
      bad("expected (kernel (params ...) (body ...))", root);
    if (root[1].size() - 1 != c_.params.size()) bad("parameter count differs from the case's", root[1]);
    std::vector<ExpectedStorage> out(c_.params.size());
    state_.resize(c_.params.size());
    int first_out = -1;
    for (std::size_t i = 0; i < c_.params.size(); ++i) {
      const ParamSpec& p = c_.params[i];
      if (p.kind != ParamKind::out) continue;
      if (first_out < 0) first_out = static_cast<int>(i);
      state_[i].resize(p.storage.size());
      for (std::size_t k = 0; k < p.storage.size(); ++k) state_[i][k] = {p.storage[k], 0};
    }
    if (first_out < 0) bad("no output", root[1]);
    grid_ = {1, 1, 1};
    const ParamSpec& o = c_.params[first_out];
    for (std::size_t d = 0; d < o.shape.size() && d < 3; ++d) grid_[d] = (o.shape[d] + o.tile[d] - 1) / o.tile[d];
    for (pid_[2] = 0; pid_[2] < grid_[2]; ++pid_[2])
      for (pid_[1] = 0; pid_[1] < grid_[1]; ++pid_[1])
        for (pid_[0] = 0; pid_[0] < grid_[0]; ++pid_[0]) run_program(root[2]);
    for (std::size_t i = 0; i < c_.params.size(); ++i) out[i].elems = std::move(state_[i]);
    return out;
  }

 private:
  struct Frame {
    int64_t iv = 0;
    std::vector<Val> carried;
  };

  void run_program(const SNode& body) {
    memo_.assign(1, {});
    loop_memo_.assign(1, {});
    for (std::size_t s = 1; s < body.size(); ++s) {
      const SNode& st = body[s];
      if (st.head() != "store" || st.size() != 3) bad("expected (store P EXPR)", st);
      const int64_t q = st[1].as_int();
      const ParamSpec& p = param(q, ParamKind::out, st);
      Val v = eval(st[2]);
      if (v.shape != p.tile || v.dt != p.dtype) bad("stored value's type differs from the output's", st);
      for_each_in_view(p, p.tile, own_index(p), [&](int64_t i, int64_t addr) { state_[q][addr] = v.x[i]; });
      memo_.assign(1, {});
      loop_memo_.assign(1, {});
    }
  }

  const ParamSpec& param(int64_t i, ParamKind kind, const SNode& n) const {
    if (i < 0 || i >= std::ssize(c_.params) || c_.params[i].kind != kind) bad("parameter of the wrong kind", n);
    return c_.params[i];
  }

  Shape own_index(const ParamSpec& p) const {
    Shape idx(p.shape.size(), 0);
    for (std::size_t d = 0; d < idx.size() && d < 3; ++d) idx[d] = pid_[d];
    return idx;
  }

  // Calls f(flat tile index, storage address) for each element of the tile of `tile` sizes at
  // tile index `idx` of p that lies inside p's view.
  template <class F>
  void for_each_in_view(const ParamSpec& p, const Shape& tile, const Shape& idx, F f) const {
    const int64_t n = numel(tile);
    for (int64_t i = 0; i < n; ++i) {
      const Shape c = unravel(i, tile);
      int64_t addr = p.offset;
      bool inside = true;
      for (std::size_t d = 0; d < tile.size(); ++d) {
        const int64_t e = idx[d] * tile[d] + c[d];
        if (e < 0 || e >= p.shape[d]) {
          inside = false;
          break;
        }
        addr += e * p.strides[d];
      }
      if (inside) f(i, addr);
    }
  }

  Val typed(const SNode& n) const {
    const SNode& dims = n[2];
    if (!dims.is_list || dims.bracket != '[') bad("expected a shape", n);
    Val v;
    v.dt = dtype_of(n[1]);
    for (const SNode& d : dims.items) v.shape.push_back(d.as_int());
    v.x.assign(static_cast<std::size_t>(numel(v.shape)), Elem{0, 0});
    return v;
  }

  Val eval(const SNode& n) {
    for (auto it = memo_.rbegin(); it != memo_.rend(); ++it)
      if (auto f = it->find(n.text); f != it->end()) return f->second;
    Val v = eval_uncached(n);
    memo_.back().emplace(n.text, v);
    return v;
  }

  // A rank-0 integer operand (an index or a trip count), or nullopt if unknown.
  std::optional<int64_t> scalar_int(const SNode& n) {
    Val v = eval(n);
    if (!v.shape.empty() || v.dt != DType::i32) bad("expected an i32 [] expression", n);
    if (!(v.x[0].e == 0)) return std::nullopt;
    return static_cast<int64_t>(v.x[0].v);
  }

  // Whether a node's value is a float product (possibly negated, broadcast or reshaped), which the
  // GPU may fuse with an add into an fma.
  static bool is_product(const SNode& n) {
    const SNode* p = &n;
    while (p->head() == "broadcast" || p->head() == "reshape" || p->head() == "transpose" || p->head() == "neg")
      p = &(*p)[3];
    return p->head() == "mul" && (*p)[1].atom != "i32";
  }

  Val eval_uncached(const SNode& n) {
    const std::string_view op = n.head();
    if (op.empty() || n.size() < 3) bad("not an expression", n);
    if (op == "result") {
      const int64_t k = n[3].as_int();
      std::vector<Val> r = eval_for(n[4]);
      if (k < 0 || k >= std::ssize(r)) bad("no such loop result", n);
      return r[k];
    }
    Val v = typed(n);
    const int64_t size = std::ssize(v.x);
    if (op == "load" || op == "load_like" || op == "own") {
      const bool own = op == "own";
      const int64_t p = n[3].as_int();
      const ParamSpec& src = param(p, own ? ParamKind::out : ParamKind::in, n);
      Shape idx;
      bool known = true;
      if (op == "load") {
        for (std::size_t i = 4; i < n.size(); ++i) {
          std::optional<int64_t> k = scalar_int(n[i]);
          const std::size_t d = i - 4;
          if (!k || d >= v.shape.size() || std::llabs(*k * v.shape[d]) > (int64_t{1} << 30)) known = false;
          idx.push_back(k.value_or(0));
        }
      } else {
        const ParamSpec& q = param(op == "own" ? p : n[4].as_int(), ParamKind::out, n);
        if (q.tile != v.shape) bad("tile shape differs from the output's", n);
        idx = own_index(q);
      }
      if (idx.size() != src.shape.size() || v.shape.size() != src.shape.size() || v.dt != src.dtype)
        bad("load does not match its tensor", n);
      if (!known) {
        for (Elem& e : v.x) e = {0, kUnknown};
        return v;
      }
      for_each_in_view(src, v.shape, idx, [&](int64_t i, int64_t addr) {
        v.x[i] = own ? state_[p][addr] : Elem{src.storage[addr], 0};
      });
      return v;
    }
    if (op == "arg") {
      const ParamSpec& s = param(n[3].as_int(), ParamKind::scalar, n);
      v.x[0] = {round_to(v.dt, s.scalar), 0};
      return v;
    }
    if (op == "dim") {
      const int64_t p = n[3].as_int(), d = n[4].as_int();
      if (p < 0 || p >= std::ssize(c_.params) || c_.params[p].kind == ParamKind::scalar || d < 0 ||
          d >= std::ssize(c_.params[p].shape))
        bad("bad dim", n);
      v.x[0] = {static_cast<double>(c_.params[p].shape[d]), 0};
      return v;
    }
    if (op == "program_id" || op == "num_programs") {
      const int64_t d = n[3].as_int();
      if (d < 0 || d > 2) bad("bad grid axis", n);
      v.x[0] = {static_cast<double>(op == "program_id" ? pid_[d] : grid_[d]), 0};
      return v;
    }
    if (op == "const") {
      uint64_t bits = 0;
      std::string_view hex = n[3].atom;
      if (hex.size() != 18 || !hex.starts_with("0x")) bad("bad constant", n);
      for (char ch : hex.substr(2)) bits = bits * 16 + static_cast<uint64_t>(ch <= '9' ? ch - '0' : ch - 'a' + 10);
      const double d = std::bit_cast<double>(bits);
      double value = d;
      if (v.dt == DType::i32) value = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(d)));
      else value = round_to(v.dt, d);
      for (Elem& e : v.x) e = {value, 0};
      return v;
    }
    if (op == "iota") {
      for (int64_t i = 0; i < size; ++i) v.x[i] = {static_cast<double>(i), 0};
      return v;
    }
    if (op == "iv" || op == "carried") {
      const int64_t id = n[3].as_int();
      if (id < 0 || id >= std::ssize(frames_)) bad("loop variable outside its loop", n);
      if (op == "iv") {
        v.x[0] = {static_cast<double>(frames_[id].iv), 0};
        return v;
      }
      const int64_t k = n[4].as_int();
      if (k < 0 || k >= std::ssize(frames_[id].carried)) bad("no such carried value", n);
      return frames_[id].carried[k];
    }
    if (op == "cast") {
      Val x = eval(n[3]);
      for (int64_t i = 0; i < size; ++i) v.x[i] = cast_op(x.dt, v.dt, x.x[i]);
      return v;
    }
    if (op == "broadcast") {
      Val x = eval(n[3]);
      if (x.shape.empty()) {
        for (Elem& e : v.x) e = x.x[0];
        return v;
      }
      if (x.shape.size() != v.shape.size()) bad("broadcast between ranks", n);
      for (int64_t i = 0; i < size; ++i) {
        Shape c = unravel(i, v.shape);
        int64_t j = 0;
        for (std::size_t d = 0; d < c.size(); ++d) j = j * x.shape[d] + (x.shape[d] == 1 ? 0 : c[d]);
        v.x[i] = x.x[j];
      }
      return v;
    }
    if (op == "reshape") {
      Val x = eval(n[3]);
      if (std::ssize(x.x) != size) bad("reshape changes the element count", n);
      v.x = x.x;
      return v;
    }
    if (op == "transpose") {
      Val x = eval(n[3]);
      if (v.shape.size() != 2 || x.shape.size() != 2) bad("transpose of rank other than 2", n);
      for (int64_t i = 0; i < v.shape[0]; ++i)
        for (int64_t j = 0; j < v.shape[1]; ++j) v.x[i * v.shape[1] + j] = x.x[j * x.shape[1] + i];
      return v;
    }
    if (op == "reduce") return reduce(v, n[3].atom, n[4].as_int(), eval(n[5]));
    if (op == "mma") return mma(v, eval(n[3]), eval(n[4]), eval(n[5]));
    if (op == "select") {
      Val cnd = eval(n[3]), a = eval(n[4]), b = eval(n[5]);
      for (int64_t i = 0; i < size; ++i) v.x[i] = select_op(v.dt, cnd.x[i], a.x[i], b.x[i]);
      return v;
    }
    if (op == "for") return eval_for(n)[0];
    if (n.size() == 4) {
      Val x = eval(n[3]);
      if (std::ssize(x.x) != size) bad("operand shape", n);
      for (int64_t i = 0; i < size; ++i) v.x[i] = unary_op(op, x.dt, x.x[i], ctx_);
      return v;
    }
    if (n.size() == 5) {
      Val a = eval(n[3]), b = eval(n[4]);
      if (std::ssize(a.x) != size || std::ssize(b.x) != size) bad("operand shape", n);
      const bool pa = is_product(n[3]), pb = is_product(n[4]);
      for (int64_t i = 0; i < size; ++i) v.x[i] = binary_op(op, a.dt, a.x[i], b.x[i], pa, pb, ctx_);
      return v;
    }
    bad("unknown expression", n);
  }

  Val reduce(Val v, std::string_view kind, int64_t axis, const Val& x) {
    if (axis < 0 || axis >= std::ssize(x.shape)) bad("bad reduction axis", SNode{});
    const int64_t n = x.shape[axis];
    int64_t inner = 1;
    for (std::size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
    const int64_t outer = std::ssize(v.x) / inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        auto at = [&](int64_t k) { return x.x[(o * n + k) * inner + in]; };
        Elem r = at(0);
        if (kind == "max" || kind == "min") {
          // i1: max is any (or), min is all (and).
          const std::string_view combine = x.dt != DType::i1 ? kind : kind == "max" ? "or" : "and";
          for (int64_t k = 1; k < n; ++k) r = binary_op(combine, x.dt, r, at(k), false, false, ctx_);
        } else if (kind == "sum") {
          r = sum(x.dt, n, at);
        } else {
          throw std::runtime_error("reference: unknown reduction");
        }
        v.x[o * inner + in] = r;
      }
    return v;
  }

  // A sum accumulated in f32 (floats, in any order) or in i32 (wrapping).
  template <class At>
  Elem sum(DType d, int64_t n, At at) {
    if (d == DType::i32) {
      int64_t s = 0;
      for (int64_t k = 0; k < n; ++k) {
        if (!(at(k).e == 0)) return {0, kUnknown};
        s += static_cast<int64_t>(at(k).v);
      }
      return {round_to(DType::i32, static_cast<double>(s)), 0};
    }
    double r = 0, magnitude = 0, pe = 0;
    bool finite = true, exact = true;
    for (int64_t k = 0; k < n; ++k) {
      const Elem e = at(k);
      if (!(e.e < kUnknown)) return {0, kUnknown};
      r = k == 0 ? e.v : r + e.v;
      magnitude += std::fabs(e.v);
      pe += e.e;
      finite = finite && std::isfinite(e.v);
      exact = exact && e.e == 0;
    }
    if (!finite) return exact ? finish_float(d, r, 0, true) : Elem{0, kUnknown};  // inf, -inf or NaN in any order
    if (n > 1) pe += (n - 1) * 0x1p-24 * magnitude;
    if (magnitude >= max_finite(DType::f32)) return {0, kUnknown};  // a partial sum may overflow
    // A zero sum's sign depends on the order and on where the accumulator starts (+0, or the first
    // element: a sum of one -0 may give either).
    if (r == 0) pe = std::max(pe, DBL_MIN);
    return finish_float(d, r, pe, n == 1);
  }

  Val mma(Val v, const Val& a, const Val& b, const Val& acc) {
    if (a.shape.size() != 2 || b.shape.size() != 2 || v.shape.size() != 2) bad("mma of rank other than 2", SNode{});
    const int64_t m = v.shape[0], nn = v.shape[1], k = a.shape[1];
    // f32 operands may be multiplied as tf32 (the tensor cores' f32 product): each operand keeps
    // 10 mantissa bits, so each product is within 2^-9 of its value. 8-bit float products are
    // exact, but Hopper's 8-bit wgmma keeps 13 bits of each instruction's sum; with each k-tile's
    // partial sum added in f32 (at most 8 instructions) that is within 2^-9 of the magnitude too.
    const double tf32 = a.dt == DType::f32 || b.dt == DType::f32 || is_float8(a.dt) || is_float8(b.dt) ? 0x1p-9 : 0.0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < nn; ++j) {
        const Elem c = acc.x[i * nn + j];
        double r = c.v, magnitude = std::fabs(c.v), pe = c.e;
        for (int64_t kk = 0; kk < k; ++kk) {
          const Elem x = a.x[i * k + kk], y = b.x[kk * nn + j];
          r += x.v * y.v;
          magnitude += std::fabs(x.v * y.v);
          pe += std::fabs(x.v) * y.e + std::fabs(y.v) * x.e + x.e * y.e + tf32 * std::fabs(x.v * y.v);
        }
        if (!std::isfinite(magnitude) || !(pe < kUnknown)) {
          v.x[i * nn + j] = {0, kUnknown};
          continue;
        }
        pe += (k + 1) * 0x1p-23 * magnitude;
        if (pe == 0) pe = DBL_MIN;
        v.x[i * nn + j] = finish_float(DType::f32, r, pe, false);
      }
    return v;
  }

  std::vector<Val> eval_for(const SNode& n) {
    if (n.head() != "for" || n.size() != 7) bad("expected (for TYPE ID N (INIT*) (YIELD*))", n);
    for (auto it = loop_memo_.rbegin(); it != loop_memo_.rend(); ++it)
      if (auto f = it->find(n.text); f != it->end()) return f->second;
    const int64_t id = n[3].as_int();
    if (id != std::ssize(frames_)) bad("loop id is not its nesting depth", n);
    std::optional<int64_t> count = scalar_int(n[4]);
    std::vector<Val> carried;
    for (const SNode& i : n[5].items) carried.push_back(eval(i));
    if (carried.empty() || carried.size() != n[6].size()) bad("loop inits and yields differ", n);
    if (!count) {
      for (Val& c : carried)
        for (Elem& e : c.x) e = {0, kUnknown};
    } else {
      frames_.push_back({0, std::move(carried)});
      for (int64_t i = 0; i < *count; ++i) {
        frames_.back().iv = i;
        memo_.emplace_back();
        loop_memo_.emplace_back();
        std::vector<Val> next;
        for (const SNode& y : n[6].items) next.push_back(eval(y));
        memo_.pop_back();
        loop_memo_.pop_back();
        frames_.back().carried = std::move(next);
      }
      carried = std::move(frames_.back().carried);
      frames_.pop_back();
    }
    loop_memo_.back().emplace(n.text, carried);
    return carried;
  }

  const FuzzCase& c_;
  OpContext ctx_;
  std::vector<std::vector<Elem>> state_;  // the outputs' storages as the programs write them
  std::array<int64_t, 3> pid_{}, grid_{};
  std::vector<Frame> frames_;
  std::vector<std::unordered_map<std::string_view, Val>> memo_;
  std::vector<std::unordered_map<std::string_view, std::vector<Val>>> loop_memo_;
};

}  // namespace

std::vector<ExpectedStorage> interpret(const FuzzCase& c, const OpContext& ctx) { return Interpreter(c, ctx).run(); }

}  // namespace tessera::fuzz

// kernel_generator.cpp: the random kernel generator (see kernel_generator.h).
//
// Expressions are generated top-down from the type they must have (a dtype and a static shape):
// each production checks that it applies to the type (a reduction needs a size-1 dim, mma an f32
// matrix, a logic op i1, ...) and generates its operands with the types it needs, so the text is
// well typed by construction. Parameters are created on demand: a load of a dtype and rank makes
// (or reuses) an input of that dtype and rank, an index may make an i32 scalar. Loops are scoped:
// (iv) and (carried) leaves name only enclosing loops, a loop's ID is its nesting depth where its
// text appears, and a loop may be read again through another (result K FOR) only in the scope
// that generated it. Index expressions stay small (about -2..6) so that loads fall both inside
// and outside the tensors without overflowing i32 offsets; float-to-int casts clamp their operand
// (NaN to 0, then to +-1e6) so that no conversion is out of range. 8-bit float tiles (f8e4m3,
// f8e5m2) hold data: they are loaded, stored, selected, reshaped, transposed, broadcast, carried,
// cast and multiplied by mma, never computed on (the front end's rule).
#include "kernel_generator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

namespace tessera::fuzz {
namespace {

using Shape = std::vector<int64_t>;

struct Type {
  DType dt = DType::f32;
  Shape shape;
  bool operator==(const Type&) const = default;
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

struct Expr {
  Type type;
  std::string text;
};

std::string type_text(const Type& t) { return fmt::format("{} [{}]", dtype_name(t.dt), fmt::join(t.shape, " ")); }

bool is_float(DType d) { return d == DType::f32 || d == DType::f16 || d == DType::bf16; }
bool is_f8(DType d) { return d == DType::f8e4m3 || d == DType::f8e5m2; }

// A loop being generated (its body is the current scope) or one whose result can be read again.
struct LoopDef {
  std::vector<Type> carried;
  std::string text;  // the (for ...) text, once complete
};

class Generator {
 public:
  Generator(uint64_t seed, const GeneratorOptions& o) : rng_(seed), o_(o) {
    c_.seed = seed;
    c_.name = fmt::format("fuzz_{}", seed);
  }

  FuzzCase run() {
    exact_ = rng_.chance(0.3);
    max_elems_ = rng_.chance(o_.big_chance) ? o_.big_elems : o_.max_elems;
    make_outputs();
    scopes_.emplace_back();
    std::vector<int> order;
    for (int i = 0; i < std::ssize(c_.params); ++i) order.push_back(i);
    if (order.size() > 1 && rng_.chance(0.5)) std::swap(order[0], order[1]);
    std::string body;
    for (int q : order) {
      const ParamSpec& out = c_.params[q];
      nodes_left_ = o_.max_nodes / static_cast<int>(order.size());
      Expr e = gen(Type{out.dtype, out.tile}, o_.max_depth);
      body += fmt::format(" (store {} {})", q, e.text);
      stored_.insert(q);
    }
    c_.ast = fmt::format("(kernel {} (body{}))", params_text(c_.params), body);
    c_.whole_tiles = rng_.chance(0.8);
    c_.static_shapes = rng_.chance(0.15);
    c_.features = features_;
    add_random_hints(c_, /*gemm=*/false);
    sort_features(c_);
    return std::move(c_);
  }

 private:
  // ---- parameters -------------------------------------------------------------------------------

  DType random_dtype() {
    const double u = rng_.unit();
    return u < 0.32   ? DType::f32
           : u < 0.46 ? DType::f16
           : u < 0.6  ? DType::bf16
           : u < 0.78 ? DType::i32
           : u < 0.92 ? DType::i1
           : u < 0.96 ? DType::f8e4m3
                      : DType::f8e5m2;
  }

  // A power of two 2^k, k in [0, max_log].
  int64_t pow2(int max_log) { return int64_t{1} << rng_.uniform(0, max_log); }

  // A random tile shape of `rank` dims, at most `max_elems` elements (at most 256 per dim above rank 1).
  Shape tile_shape(int rank, int64_t max_elems) {
    Shape s(rank, 1);
    int64_t budget = max_elems;
    const int64_t per_dim = rank == 1 ? max_elems : 256;
    for (int tries = 0; tries < 3 * rank; ++tries) {
      int d = static_cast<int>(rng_.uniform(0, rank - 1));
      int64_t grow = pow2(rank == 1 ? 13 : 4);
      if (s[d] * grow > per_dim || grow > budget) continue;
      s[d] *= grow;
      budget /= grow;
    }
    return s;
  }

  double random_value(DType d, bool specials) {
    if (d == DType::i1) return static_cast<double>(rng_.uniform(0, 1));
    if (d == DType::i32) {
      if (specials && rng_.chance(0.1)) return rng_.pick(std::vector<double>{2147483647.0, -2147483648.0, 65536.0, -1.0});
      return static_cast<double>(rng_.uniform(-8, 8));
    }
    if (specials && rng_.chance(0.05)) {
      const double big = max_finite(d);
      return round_to(d, rng_.pick(std::vector<double>{0.0, -0.0, std::numeric_limits<double>::infinity(),
                                                          -std::numeric_limits<double>::infinity(),
                                                          std::numeric_limits<double>::quiet_NaN(), big, -big,
                                                          std::ldexp(1.0, d == DType::f16 ? -20 : -130)}));
    }
    if (rng_.chance(0.2)) return static_cast<double>(rng_.uniform(-4, 4));
    return round_to(d, (rng_.unit() * 2 - 1) * 4);
  }

  // The view of a tensor parameter of `shape`: dense, a slice of a larger storage, a transposed
  // matrix. Fills strides, offset, storage_elems, storage contents and `view`.
  void make_view(ParamSpec& p) {
    const int rank = static_cast<int>(p.shape.size());
    Shape storage_shape = p.shape;
    std::vector<int> perm(rank);
    for (int d = 0; d < rank; ++d) perm[d] = d;
    int64_t begin = 0;
    int sliced = -1;
    const double u = rng_.unit();
    if (u < 0.15 && rank == 2) {
      p.view = "transposed";
      std::swap(storage_shape[0], storage_shape[1]);
      std::swap(perm[0], perm[1]);
    } else if (u < 0.35) {
      sliced = static_cast<int>(rng_.uniform(0, rank - 1));
      const int64_t extra = rng_.uniform(1, 5);
      begin = rng_.uniform(0, extra);
      storage_shape[sliced] += extra;
      p.view = fmt::format("slice of dim {} at {}", sliced, begin);
    } else {
      p.view = "dense";
    }
    // Row-major strides of the storage, then permuted to the view's dims.
    Shape storage_strides(rank);
    int64_t n = 1;
    for (int d = rank - 1; d >= 0; --d) {
      storage_strides[d] = n;
      n *= storage_shape[d];
    }
    p.storage_elems = n;
    p.strides.assign(rank, 0);
    for (int d = 0; d < rank; ++d) p.strides[d] = storage_strides[perm[d]];
    p.offset = sliced >= 0 ? begin * p.strides[sliced] : 0;
    const bool specials = rng_.chance(0.2);
    p.storage.resize(static_cast<std::size_t>(n));
    for (double& v : p.storage) v = random_value(p.dtype, specials);
  }

  // A tensor size along one dim for tiles of `tile` over about `tiles` tiles: ragged or whole.
  int64_t extent(int64_t tile, int64_t tiles) {
    if (exact_) return tile * tiles;
    if (rng_.chance(0.03)) return 0;
    return (tiles - 1) * tile + rng_.uniform(1, tile);
  }

  void make_outputs() {
    const double u = rng_.unit();
    const int rank = u < 0.35 ? 1 : u < 0.8 ? 2 : 3;
    ParamSpec out;
    out.kind = ParamKind::out;
    out.dtype = random_dtype();
    out.tile = tile_shape(rank, max_elems_);
    Shape grid(rank);
    for (int d = 0; d < rank; ++d) {
      grid[d] = rng_.uniform(1, rank == 1 ? 6 : 3);
      out.shape.push_back(extent(out.tile[d], grid[d]));
    }
    make_view(out);
    c_.params.push_back(out);
    if (!rng_.chance(0.25)) return;
    // A second output with the same grid: tiles scaled by 1/2, 1 or 2 per dim.
    ParamSpec second;
    second.kind = ParamKind::out;
    second.dtype = random_dtype();
    int64_t elems = 1;
    for (int d = 0; d < rank; ++d) {
      int64_t t = out.tile[d];
      const int64_t k = rng_.uniform(-1, 1);
      if (k < 0 && t > 1) t /= 2;
      if (k > 0 && elems * t * 2 <= max_elems_) t *= 2;
      elems *= t;
      second.tile.push_back(t);
      // The same number of tiles along d as the first output (none if it has none).
      const int64_t tiles = out.shape[d] == 0 ? 0 : (out.shape[d] + out.tile[d] - 1) / out.tile[d];
      second.shape.push_back(tiles == 0 ? 0 : exact_ ? tiles * t : (tiles - 1) * t + rng_.uniform(1, t));
    }
    make_view(second);
    c_.params.push_back(second);
  }

  int outputs() const {
    int n = 0;
    for (const ParamSpec& p : c_.params) n += p.kind == ParamKind::out;
    return n;
  }

  // An input of dtype d with the sizes of output q (for load_like).
  int input_like(DType d, int q) {
    std::vector<int> fits;
    for (int i = 0; i < std::ssize(c_.params); ++i)
      if (c_.params[i].kind == ParamKind::in && c_.params[i].dtype == d && c_.params[i].shape == c_.params[q].shape)
        fits.push_back(i);
    if (!fits.empty() && rng_.chance(0.6)) return rng_.pick(fits);
    ParamSpec in;
    in.kind = ParamKind::in;
    in.dtype = d;
    in.shape = c_.params[q].shape;
    make_view(in);
    c_.params.push_back(in);
    return static_cast<int>(c_.params.size()) - 1;
  }

  // An input of dtype d and rank r, to load tiles of `tile` from.
  int input_for_load(DType d, const Shape& tile) {
    std::vector<int> fits;
    for (int i = 0; i < std::ssize(c_.params); ++i)
      if (c_.params[i].kind == ParamKind::in && c_.params[i].dtype == d && c_.params[i].shape.size() == tile.size())
        fits.push_back(i);
    if (!fits.empty() && rng_.chance(0.5)) return rng_.pick(fits);
    ParamSpec in;
    in.kind = ParamKind::in;
    in.dtype = d;
    int64_t elems = 1;
    for (int64_t t : tile) {
      int64_t e = extent(t, rng_.uniform(1, 4));
      if (elems * std::max<int64_t>(e, 1) > 65536) e = t;
      elems *= std::max<int64_t>(e, 1);
      in.shape.push_back(e);
    }
    make_view(in);
    c_.params.push_back(in);
    return static_cast<int>(c_.params.size()) - 1;
  }

  int scalar_param(DType d) {
    std::vector<int> fits;
    for (int i = 0; i < std::ssize(c_.params); ++i)
      if (c_.params[i].kind == ParamKind::scalar && c_.params[i].dtype == d) fits.push_back(i);
    if (!fits.empty() && rng_.chance(0.7)) return rng_.pick(fits);
    ParamSpec s;
    s.kind = ParamKind::scalar;
    s.dtype = d;
    s.scalar = d == DType::i32 ? static_cast<double>(rng_.uniform(-2, 4)) : random_value(d, false);
    c_.params.push_back(s);
    return static_cast<int>(c_.params.size()) - 1;
  }

  // ---- expressions --------------------------------------------------------------------------------

  template <class... Children>
  Expr node(std::string_view op, const Type& t, const Children&... children) {
    features_.emplace_back(op);
    std::string text = fmt::format("({} {}", op, type_text(t));
    ((text += " ", text += children.text), ...);
    text += ")";
    --nodes_left_;
    return {t, std::move(text)};
  }

  Expr constant(const Type& t, double v) {
    features_.emplace_back("const");
    return {t, fmt::format("(const {} 0x{:016x})", type_text(t), std::bit_cast<uint64_t>(v))};
  }

  Expr random_constant(const Type& t) {
    double v;
    if (t.dt == DType::i1) v = static_cast<double>(rng_.uniform(0, 1));
    else if (t.dt == DType::i32) v = static_cast<double>(rng_.uniform(-3, 5));
    else v = rng_.chance(0.5) ? static_cast<double>(rng_.uniform(-3, 3)) * 0.5 : round_to(DType::bf16, rng_.unit() * 4 - 2);
    return constant(t, v);
  }

  Expr gen(const Type& t, int depth) {
    if (depth <= 0 || nodes_left_ <= 0 || rng_.chance(0.15)) return leaf(t, depth);
    for (int tries = 0; tries < 8; ++tries) {
      std::optional<Expr> e;
      const int64_t k = rng_.uniform(0, 99);
      if (k < 16) e = unary(t, depth);
      else if (k < 36) e = binary(t, depth);
      else if (k < 44) e = select(t, depth);
      else if (k < 52) e = cast(t, depth);
      else if (k < 60) e = broadcast(t, depth);
      else if (k < 64) e = reshape(t, depth);
      else if (k < 68) e = transpose(t, depth);
      else if (k < 78) e = reduce(t, depth);
      else if (k < 81) e = mma(t, depth);
      else if (k < 89) e = loop_result(t, depth);
      else e = leaf(t, depth);
      if (e) return *e;
    }
    return leaf(t, depth);
  }

  Expr leaf(const Type& t, int depth) {
    if (t.shape.empty()) return scalar_leaf(t, depth);
    for (int tries = 0; tries < 8; ++tries) {
      const int64_t k = rng_.uniform(0, 99);
      if (k < 25) {  // load_like
        std::vector<int> qs;
        for (int q = 0; q < outputs(); ++q)
          if (c_.params[q].tile == t.shape) qs.push_back(q);
        if (qs.empty()) continue;
        const int q = rng_.pick(qs);
        const int p = input_like(t.dt, q);
        features_.emplace_back("load_like");
        return {t, fmt::format("(load_like {} {} {})", type_text(t), p, q)};
      }
      if (k < 35) {  // own
        std::vector<int> qs;
        for (int q = 0; q < outputs(); ++q)
          if (c_.params[q].tile == t.shape && c_.params[q].dtype == t.dt) qs.push_back(q);
        if (qs.empty()) continue;
        const int q = rng_.pick(qs);
        features_.emplace_back(stored_.count(q) ? "own after store" : "own");
        return {t, fmt::format("(own {} {})", type_text(t), q)};
      }
      if (k < 60) {  // load at computed tile indices
        const int p = input_for_load(t.dt, t.shape);
        std::string idx;
        for (std::size_t d = 0; d < t.shape.size(); ++d) idx += " " + index(2).text;
        features_.emplace_back("load");
        features_.emplace_back(fmt::format("load rank {}", t.shape.size()));
        return {t, fmt::format("(load {} {}{})", type_text(t), p, idx)};
      }
      if (k < 70) {  // a carried value of an enclosing loop
        if (auto e = carried(t)) return *e;
        continue;
      }
      if (k < 80 && t.dt == DType::i32 && t.rank() <= 4) {  // iota along one dim
        std::vector<int> dims;
        for (int d = 0; d < t.rank(); ++d)
          if (t.shape[d] > 1) dims.push_back(d);
        if (dims.empty()) continue;
        const int d = rng_.pick(dims);
        Type line{DType::i32, {t.shape[d]}};
        Expr io = node("iota", line);
        if (t.rank() == 1) return io;
        Shape ones(t.rank(), 1);
        ones[d] = t.shape[d];
        return node("broadcast", t, node("reshape", Type{DType::i32, ones}, io));
      }
      if (k < 90) return node("broadcast", t, scalar_leaf(Type{t.dt, {}}, depth));
      return random_constant(t);
    }
    return random_constant(t);
  }

  Expr scalar_leaf(const Type& t, int depth) {
    if (t.dt == DType::i32 && rng_.chance(0.5)) return index(depth > 1 ? 1 : 0);
    const int64_t k = rng_.uniform(0, 9);
    if (k < 3) {
      if (auto e = carried(t)) return *e;
    }
    if (k < 6 && !is_f8(t.dt)) {
      const int p = scalar_param(t.dt);
      features_.emplace_back("arg");
      return {t, fmt::format("(arg {} {})", type_text(t), p)};
    }
    return random_constant(t);
  }

  std::optional<Expr> carried(const Type& t) {
    std::vector<std::pair<int, int>> found;
    for (int id = 0; id < std::ssize(loops_); ++id)
      for (int k = 0; k < std::ssize(loops_[id].carried); ++k)
        if (loops_[id].carried[k] == t) found.emplace_back(id, k);
    if (found.empty()) return std::nullopt;
    auto [id, k] = rng_.pick(found);
    features_.emplace_back("carried");
    return Expr{t, fmt::format("(carried {} {} {})", type_text(t), id, k)};
  }

  // An i32 [] tile index, mostly in about -2..6.
  Expr index(int depth) {
    const Type t{DType::i32, {}};
    const int64_t k = rng_.uniform(0, depth > 0 ? 99 : 59);
    const int out_rank = static_cast<int>(c_.params[0].shape.size());
    if (k < 12) return constant(t, static_cast<double>(rng_.uniform(-1, 3)));
    if (k < 30) {
      features_.emplace_back("program_id");
      return {t, fmt::format("(program_id {} {})", type_text(t), rng_.uniform(0, rng_.chance(0.9) ? out_rank - 1 : 2))};
    }
    if (k < 34) {
      features_.emplace_back("num_programs");
      return {t, fmt::format("(num_programs {} {})", type_text(t), rng_.uniform(0, 2))};
    }
    if (k < 44 && !loops_.empty()) {
      features_.emplace_back("iv");
      return {t, fmt::format("(iv {} {})", type_text(t), rng_.uniform(0, std::ssize(loops_) - 1))};
    }
    if (k < 48) {
      if (auto e = carried(t)) return *e;
    }
    if (k < 52) {
      const int p = scalar_param(DType::i32);
      features_.emplace_back("arg");
      return {t, fmt::format("(arg {} {})", type_text(t), p)};
    }
    if (k < 60) {  // tiles in a dim of some tensor: (div (dim P D) (const T))
      std::vector<int> tensors;
      for (int i = 0; i < std::ssize(c_.params); ++i)
        if (c_.params[i].kind != ParamKind::scalar) tensors.push_back(i);
      const int p = rng_.pick(tensors);
      const int64_t d = rng_.uniform(0, std::ssize(c_.params[p].shape) - 1);
      features_.emplace_back("dim");
      Expr dim{t, fmt::format("(dim {} {} {})", type_text(t), p, d)};
      return node("div", t, dim, constant(t, static_cast<double>(pow2(7))));
    }
    if (k < 80) {
      const char* op = rng_.pick(std::vector<const char*>{"add", "sub", "max", "min"});
      return node(op, t, index(depth - 1), index(depth - 1));
    }
    if (k < 86) return node("mul", t, index(depth - 1), constant(t, static_cast<double>(rng_.uniform(0, 2))));
    if (k < 90) return node("div", t, index(depth - 1), constant(t, static_cast<double>(rng_.uniform(1, 3))));
    if (k < 93) return node("neg", t, index(depth - 1));
    const Type b{DType::i1, {}};
    const char* cmp = rng_.pick(std::vector<const char*>{"eq", "ne", "lt", "le", "gt", "ge"});
    return node("select", t, node(cmp, b, index(depth - 1), index(depth - 1)), index(depth - 1), index(depth - 1));
  }

  std::optional<Expr> unary(const Type& t, int depth) {
    if (is_f8(t.dt)) return std::nullopt;
    if (t.dt == DType::i1) return node("not", t, gen(t, depth - 1));
    if (t.dt == DType::i32) return node(rng_.chance(0.5) ? "neg" : "abs", t, gen(t, depth - 1));
    const char* op = rng_.pick(std::vector<const char*>{"neg", "abs", "exp", "exp2", "log", "sqrt", "rsqrt", "tanh",
                                                         "fast_exp", "fast_sqrt", "fast_tanh"});
    Expr x = gen(t, depth - 1);
    const std::string_view o = op;
    // Mostly keep logs and roots in their domain, and exps from overflowing.
    if ((o == "log" || o == "sqrt" || o == "rsqrt" || o == "fast_sqrt") && rng_.chance(0.6)) x = node("abs", t, x);
    if ((o == "exp" || o == "exp2" || o == "fast_exp") && rng_.chance(0.5)) x = node("tanh", t, x);
    return node(op, t, x);
  }

  std::optional<Expr> binary(const Type& t, int depth) {
    if (t.dt == DType::i1) {
      if (rng_.chance(0.35)) return node(rng_.chance(0.5) ? "and" : "or", t, gen(t, depth - 1), gen(t, depth - 1));
      // A comparison of two operands of any dtype but the 8-bit floats.
      Type o{random_dtype(), t.shape};
      if (is_f8(o.dt)) o.dt = DType::f32;
      const char* cmp = rng_.pick(std::vector<const char*>{"eq", "ne", "lt", "le", "gt", "ge"});
      return node(cmp, t, gen(o, depth - 1), gen(o, depth - 1));
    }
    if (is_f8(t.dt)) return std::nullopt;
    std::vector<const char*> ops{"add", "sub", "mul", "div", "max", "min"};
    if (is_float(t.dt)) ops.push_back("fast_div");
    return node(rng_.pick(ops), t, gen(t, depth - 1), gen(t, depth - 1));
  }

  std::optional<Expr> select(const Type& t, int depth) {
    return node("select", t, gen(Type{DType::i1, t.shape}, depth - 1), gen(t, depth - 1), gen(t, depth - 1));
  }

  std::optional<Expr> cast(const Type& t, int depth) {
    DType from = random_dtype();
    if (from == t.dt) return std::nullopt;
    Expr x = gen(Type{from, t.shape}, depth - 1);
    if (is_f8(from) && t.dt == DType::i32) {  // through f32, where the clamp below can compute
      x = node("cast", Type{DType::f32, t.shape}, x);
      from = DType::f32;
    }
    if (is_float(from) && t.dt == DType::i32) {
      if (x.text.size() > 2000) x = leaf(Type{from, t.shape}, 0);  // it is written three times
      // NaN to 0, then clamped to +-1e6: every conversion is in range.
      const Type ft{from, t.shape};
      const Type bt{DType::i1, t.shape};
      Expr no_nan = node("select", ft, node("eq", bt, x, x), x, constant(ft, 0.0));
      x = node("min", ft, node("max", ft, no_nan, constant(ft, -1e6)), constant(ft, 1e6));
    }
    features_.emplace_back(fmt::format("cast {}->{}", dtype_name(from), dtype_name(t.dt)));
    return node("cast", t, x);
  }

  std::optional<Expr> broadcast(const Type& t, int depth) {
    if (t.shape.empty()) return std::nullopt;
    const int64_t k = rng_.uniform(0, 9);
    if (k < 2) return node("broadcast", t, gen(Type{t.dt, {}}, depth - 1));
    if (k < 4 && t.rank() > 1) {  // from a lower rank, as the DSL writes it: (broadcast (reshape X))
      const int drop = static_cast<int>(rng_.uniform(1, t.rank() - 1));
      Shape low(t.shape.begin() + drop, t.shape.end());
      for (int64_t& d : low)
        if (rng_.chance(0.3)) d = 1;
      Shape padded(drop, 1);
      padded.insert(padded.end(), low.begin(), low.end());
      Expr x = gen(Type{t.dt, low}, depth - 1);
      features_.emplace_back("broadcast lower rank");
      return node("broadcast", t, node("reshape", Type{t.dt, padded}, x));
    }
    Shape s = t.shape;
    bool changed = false;
    for (int64_t& d : s)
      if (d > 1 && rng_.chance(0.5)) d = 1, changed = true;
    if (!changed) return std::nullopt;
    return node("broadcast", t, gen(Type{t.dt, s}, depth - 1));
  }

  std::optional<Expr> reshape(const Type& t, int depth) {
    if (t.shape.empty()) return std::nullopt;
    int log = std::countr_zero(static_cast<uint64_t>(t.numel()));
    const int rank = static_cast<int>(rng_.uniform(1, 4));
    Shape s(rank, 1);
    while (log-- > 0) s[rng_.uniform(0, rank - 1)] *= 2;
    if (s == t.shape) return std::nullopt;
    return node("reshape", t, gen(Type{t.dt, s}, depth - 1));
  }

  std::optional<Expr> transpose(const Type& t, int depth) {
    if (t.rank() != 2) return std::nullopt;
    return node("transpose", t, gen(Type{t.dt, {t.shape[1], t.shape[0]}}, depth - 1));
  }

  std::optional<Expr> reduce(const Type& t, int depth) {
    if (is_f8(t.dt)) return std::nullopt;
    std::vector<int> axes;
    for (int d = 0; d < t.rank(); ++d)
      if (t.shape[d] == 1) axes.push_back(d);
    if (axes.empty()) {
      // No size-1 dim: a reduction broadcast back, as in x - max(x) along a row.
      if (t.shape.empty() || depth < 2) return std::nullopt;
      Type kept = t;
      kept.shape[rng_.uniform(0, t.rank() - 1)] = 1;
      std::optional<Expr> r = reduce(kept, depth - 1);
      if (!r) return std::nullopt;
      return node("broadcast", t, *r);
    }
    const int axis = rng_.pick(axes);
    Shape s = t.shape;
    s[axis] = pow2(8);
    while (s[axis] > 1 && Type{t.dt, s}.numel() > o_.max_elems) s[axis] /= 2;
    std::vector<const char*> kinds{"max", "min"};
    if (t.dt != DType::i1) kinds.push_back("sum"), kinds.push_back("sum");
    const char* kind = rng_.pick(kinds);
    Expr x = gen(Type{t.dt, s}, depth - 1);
    features_.emplace_back(fmt::format("reduce {}", kind));
    --nodes_left_;
    return Expr{t, fmt::format("(reduce {} {} {} {})", type_text(t), kind, axis, x.text)};
  }

  std::optional<Expr> mma(const Type& t, int depth) {
    if (t.dt != DType::f32 || t.rank() != 2) return std::nullopt;
    const int64_t m = t.shape[0], n = t.shape[1];
    int64_t k = pow2(5);
    while (k > 1 && (m * k > o_.max_elems || k * n > o_.max_elems)) k /= 2;
    const DType ab = rng_.pick(std::vector<DType>{DType::f16, DType::bf16, DType::f32, DType::f16, DType::bf16,
                                                  DType::f32, DType::f8e4m3, DType::f8e5m2});
    // The two 8-bit float formats may meet (e4m3 x e5m2).
    const DType b = is_float8(ab) && rng_.chance(0.3) ? (ab == DType::f8e4m3 ? DType::f8e5m2 : DType::f8e4m3) : ab;
    features_.emplace_back(b == ab ? fmt::format("mma {}", dtype_name(ab))
                                   : fmt::format("mma {} x {}", dtype_name(ab), dtype_name(b)));
    return node("mma", t, gen(Type{ab, {m, k}}, depth - 1), gen(Type{b, {k, n}}, depth - 1), gen(t, depth - 1));
  }

  // (result TYPE K FOR): a new loop, or one generated earlier in this scope with a value of type t.
  std::optional<Expr> loop_result(const Type& t, int depth) {
    for (const LoopDef& l : scopes_.back())
      for (int k = 0; k < std::ssize(l.carried); ++k)
        if (l.carried[k] == t && rng_.chance(0.5)) {
          features_.emplace_back("loop read twice");
          return Expr{t, fmt::format("(result {} {} {})", type_text(t), k, l.text)};
        }
    if (loops_.size() >= 2 || depth < 2) return std::nullopt;
    const int id = static_cast<int>(loops_.size());
    LoopDef def;
    const int count = static_cast<int>(rng_.uniform(1, 3));
    const int pos = static_cast<int>(rng_.uniform(0, count - 1));
    for (int i = 0; i < count; ++i) {
      if (i == pos) def.carried.push_back(t);
      else if (rng_.chance(0.4)) def.carried.push_back(Type{DType::i32, {}});
      else if (rng_.chance(0.5)) def.carried.push_back(t);
      else def.carried.push_back(Type{random_dtype(), t.shape});
    }
    // The trip count: an index, at most 4 (none if negative).
    Expr n = node("min", Type{DType::i32, {}}, index(1), constant(Type{DType::i32, {}}, 4.0));
    std::vector<std::string> inits, yields;
    for (const Type& c : def.carried) inits.push_back(gen(c, depth - 1).text);
    loops_.push_back(def);
    scopes_.emplace_back();
    for (int k = 0; k < count; ++k) {
      const Type& c = def.carried[k];
      if (c == Type{DType::i32, {}} && rng_.chance(0.5)) {  // a counter: carried + small step
        Expr step = constant(c, static_cast<double>(rng_.uniform(0, 2)));
        yields.push_back(node("add", c, Expr{c, fmt::format("(carried {} {} {})", type_text(c), id, k)}, step).text);
        features_.emplace_back("carried");
      } else {
        yields.push_back(gen(c, depth - 1).text);
      }
    }
    scopes_.pop_back();
    loops_.pop_back();
    def.text = fmt::format("(for {} {} {} ({}) ({}))", type_text(def.carried[0]), id, n.text, fmt::join(inits, " "),
                           fmt::join(yields, " "));
    features_.emplace_back(fmt::format("for depth {}", id));
    features_.emplace_back(fmt::format("for carrying {}", count));
    scopes_.back().push_back(def);
    return Expr{t, fmt::format("(result {} {} {})", type_text(t), pos, def.text)};
  }

  Rng rng_;
  GeneratorOptions o_;
  FuzzCase c_;
  bool exact_ = false;       // sizes are whole multiples of the tiles
  int64_t max_elems_ = 0;    // elements of the outputs' tiles: o_.max_elems, or o_.big_elems
  int nodes_left_ = 0;
  std::set<int> stored_;                     // outputs whose store is already in the body
  std::vector<LoopDef> loops_;               // enclosing loops, outermost first
  std::vector<std::vector<LoopDef>> scopes_; // loops generated in each scope (the kernel, loop bodies)
  std::vector<std::string> features_;
};

}  // namespace

FuzzCase generate_kernel(uint64_t seed, const GeneratorOptions& options) { return Generator(seed, options).run(); }

}  // namespace tessera::fuzz

// ast_grammar.cpp: checks nodes against the grammar table (ast_grammar.h).
//
// check_node matches a node's items against its kind's fields: the fixed fields from the front,
// a trailing optional item if the last item fits it, the repeated field over what is left. Items
// that are nodes were checked when they closed, so a field asks only for their kind. The rules the
// table cannot state follow the matcher; the uses of parameters are checked once the parameters
// are known, over every node of the DAG (no recursion).
#include "frontend/ast_grammar.h"

#include <fmt/format.h>

#include <bit>
#include <charconv>

#include "frontend/ast.h"
#include "frontend/ast_nodes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

// The most elements a tile may have: the lowering's index arithmetic (elements times bytes) stays
// far from overflowing.
constexpr int64_t kMaxTileElements = int64_t{1} << 31;

bool is_dtype(std::string_view s) {
  return s == "f32" || s == "f16" || s == "bf16" || s == "i32" || s == "i1" || s == "f8e4m3" || s == "f8e5m2";
}

bool one_of(std::string_view word, std::string_view words) {
  llvm::SmallVector<llvm::StringRef, 8> allowed;
  llvm::StringRef(words).split(allowed, ' ');
  return llvm::is_contained(allowed, llvm::StringRef(word));
}

bool is_power_of_two(int64_t d) { return d >= 1 && std::has_single_bit(static_cast<uint64_t>(d)); }

// [DIM*] of powers of two, at most kMaxTileElements in all (`each`: each at most that instead).
bool is_shape(const Sexp& s, bool each) {
  if (!s.is_list || s.bracket != '[') return false;
  int64_t elements = 1;
  for (const Sexp& d : s.children()) {
    if (d.is_list || !d.is_integer || !is_power_of_two(d.value)) return false;
    if (d.value > (each ? kMaxTileElements : kMaxTileElements / elements)) return false;
    if (!each) elements *= d.value;
  }
  return true;
}

bool is_code(std::string_view hex) {
  return hex.size() % 2 == 0 &&
         std::all_of(hex.begin(), hex.end(), [](char c) { return llvm::isHexDigit(c); });
}

// Whether the items of n at `at` (two for a TYPE) fit field f.
bool fits(const Field& f, const Sexp& n, std::size_t at) {
  const Sexp& x = *n.items[at];
  const bool atom = !x.is_list;
  switch (f.item) {
    case Item::integer:
    case Item::input:
    case Item::output:
    case Item::scalar:
    case Item::tensor: return atom && x.is_integer;
    case Item::dtype: return atom && is_dtype(x.atom);
    case Item::type: return atom && is_dtype(x.atom) && is_shape(*n.items[at + 1], false);
    case Item::dims: return is_shape(x, true);
    case Item::hex: return atom && hex_double(x.atom).has_value();
    case Item::code: return atom && is_code(x.atom);
    case Item::word: return atom && (f.words.empty() || one_of(x.atom, f.words));
    case Item::expr: return is_expression(x.kind);
    case Item::value: return is_expression(x.kind) || x.kind == NodeKind::loop;
    case Item::group: return x.kind == NodeKind::group;
    case Item::loop: return x.kind == NodeKind::loop;
    case Item::pad: return x.kind == NodeKind::pad;
    case Item::param: return x.kind == NodeKind::out || x.kind == NodeKind::in || x.kind == NodeKind::scalar;
    case Item::params: return x.kind == NodeKind::params;
    case Item::body: return x.kind == NodeKind::body;
    case Item::stmt: return x.kind == NodeKind::store;
  }
  return false;
}

std::string describe(const Field& f) {
  switch (f.item) {
    case Item::integer: return "an integer";
    case Item::dtype: return "a dtype (f32 f16 bf16 i32 i1 f8e4m3 f8e5m2)";
    case Item::type: return "a type DTYPE [DIM*] with dims powers of two, at most 2^31 elements";
    case Item::dims: return "a tile [DIM*] of powers of two up to 2^31";
    case Item::hex: return "0x and 16 hex digits";
    case Item::code: return "hex-encoded bytes";
    case Item::word: return f.words.empty() ? "an atom" : fmt::format("one of {}", f.words);
    case Item::expr: return "an expression";
    case Item::value: return "an expression or a loop";
    case Item::group: return "a list of expressions";
    case Item::loop: return "a loop (for ...)";
    case Item::pad: return "(pad 0xHEX)";
    case Item::param: return "a parameter (out ...), (in ...) or (scalar ...)";
    case Item::params: return "(params ...)";
    case Item::body: return "(body ...)";
    case Item::stmt: return "a statement (store ...)";
    case Item::input: return "an input parameter";
    case Item::output: return "an output parameter";
    case Item::scalar: return "a scalar parameter";
    case Item::tensor: return "a tensor parameter";
  }
  return "";
}

}  // namespace

NodeKind node_kind_named(std::string_view head) {
  static const llvm::StringMap<NodeKind> kinds = [] {
    llvm::StringMap<NodeKind> m;
    for (const NodeSpec& s : kGrammar) {
      llvm::SmallVector<llvm::StringRef, 16> heads;
      llvm::StringRef(s.heads).split(heads, ' ');
      for (llvm::StringRef h : heads) m[h] = s.kind;
    }
    return m;
  }();
  auto it = kinds.find(head);
  return it == kinds.end() ? NodeKind::none : it->second;
}

std::string signature(NodeKind k) {
  if (k == NodeKind::group) return "(EXPR*)";
  const NodeSpec* s = spec_of(k);
  if (!s) return "";
  std::string out = fmt::format("({}", s->name);
  for (std::size_t i = 0; i < s->count; ++i) {
    const Field& f = s->fields[i];
    const char* mark = f.repeat == Repeat::optional ? "?" : f.repeat == Repeat::any ? "*" : f.repeat == Repeat::some ? "+" : "";
    if (f.item == Item::group) out += fmt::format(" ({}*)", f.name);
    else if (f.item == Item::dims) out += fmt::format(" [{}*]", f.name);
    else out += fmt::format(" {}{}", f.name, mark);
  }
  return out + ")";
}

std::string check_node(const Sexp& n) {
  if (n.kind == NodeKind::group) {
    for (const Sexp& x : n.children())
      if (!is_expression(x.kind)) return "a list without a head holds expressions only";
    return "";
  }
  const NodeSpec* s = spec_of(n.kind);
  if (!s) return "not a node of the grammar";
  const auto wrong = [&](const Field& f) { return fmt::format("{} must be {}", f.name, describe(f)); };
  std::size_t at = 1, end = n.items.size();
  const Field* repeated = nullptr;
  const Field* optional = nullptr;
  for (std::size_t i = 0; i < s->count; ++i) {
    const Field& f = s->fields[i];
    if (f.repeat == Repeat::optional) {
      optional = &f;
    } else if (f.repeat != Repeat::one) {
      repeated = &f;
    } else {
      if (at + width(f) > end) return fmt::format("{} is missing", f.name);
      if (!fits(f, n, at)) return wrong(f);
      at += width(f);
    }
  }
  if (optional && end > at && fits(*optional, n, end - 1)) --end;
  if (repeated) {
    if (repeated->repeat == Repeat::some && at == end) return fmt::format("{} is missing", repeated->name);
    for (std::size_t i = at; i < end; ++i)
      if (!fits(*repeated, n, i)) return wrong(*repeated);
  } else if (at != end) {
    return optional ? fmt::format("an item after the last ({} must be {})", optional->name, describe(*optional))
                    : "an item after the last";
  }
  // Rules beyond the table.
  if (n.kind == NodeKind::loop) {
    const LoopNode loop(n);
    const auto inits = std::distance(loop.inits().begin(), loop.inits().end());
    const auto yields = std::distance(loop.yields().begin(), loop.yields().end());
    if (inits == 0) return "a loop must carry at least one value";
    if (yields != inits) return "a loop yields a different number of values than it carries";
  }
  return "";
}

void check_parameter_uses(std::string_view kernel, const std::deque<Sexp>& nodes, std::span<const ParamInfo> params) {
  using Kind = ParamInfo::Kind;
  const auto fail = [&](const Sexp& n, const std::string& what) {
    throw Error(fmt::format("tessera: kernel '{}': malformed AST ('{}' {})", kernel, n.text.substr(0, 80), what));
  };
  for (const Sexp& n : nodes) {
    const NodeSpec* s = n.is_list ? spec_of(n.kind) : nullptr;
    if (!s || n.kind == NodeKind::out || n.kind == NodeKind::in) continue;
    std::size_t at = 1;
    for (std::size_t i = 0; i < s->count && s->fields[i].repeat == Repeat::one; at += width(s->fields[i]), ++i) {
      const Item item = s->fields[i].item;
      if (item != Item::input && item != Item::output && item != Item::scalar && item != Item::tensor) continue;
      const int64_t p = n.items[at]->value;
      if (p < 0 || p >= std::ssize(params)) fail(n, fmt::format("names parameter {} of {}", p, params.size()));
      const Kind k = params[p].kind;
      const bool ok = item == Item::input    ? k == Kind::in
                      : item == Item::output ? k == Kind::out
                      : item == Item::scalar ? k == Kind::scalar
                                             : k != Kind::scalar;
      if (!ok) fail(n, fmt::format("needs {} as parameter {}", describe(s->fields[i]), p));
    }
    if (n.kind == NodeKind::load) {
      const LoadNode load(n);
      const auto indices = std::distance(load.indices().begin(), load.indices().end());
      if (indices != params[load.input()].rank)
        fail(n, fmt::format("has {} indices for an input of rank {}", indices, params[load.input()].rank));
    }
    if (n.kind == NodeKind::dim) {
      // memref.dim past the rank would read past the tensor's descriptor.
      const DimNode dim(n);
      if (dim.axis() < 0 || dim.axis() >= params[dim.param()].rank)
        fail(n, fmt::format("names dim {} of a rank-{} tensor", dim.axis(), params[dim.param()].rank));
    }
  }
}

}  // namespace tessera::detail

// ast.cpp: S-expression parser for the serialized kernel AST.
//
// The text comes from our own compile-time serializer, so errors here mean a version mismatch or a
// bug; they are still reported as tessera::Error (never a crash) with the offending position. The
// parser builds the DAG of ast.h bottom-up: each list is looked up by its bracket and its items,
// which are shared nodes already, so the parse costs time linear in the text. The parser and every
// walker of the tree recurse once per level of the DAG: its depth is bounded (kMaxAstDepth), and
// the launcher runs them on a stack of known size (kCompilerStackBytes).
#include "frontend/ast.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <deque>
#include <string>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

class Parser {
 public:
  Parser(std::string_view kernel, std::string_view text, std::deque<Sexp>& nodes)
      : kernel_(kernel), text_(text), nodes_(nodes) {}

  const Sexp* parse() {
    const Sexp* s = node();
    skip_spaces();
    if (pos_ != text_.size()) fail("trailing text");
    return s;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw Error(fmt::format("tessera: kernel '{}': malformed AST ({} at offset {})", kernel_, what, pos_));
  }
  void skip_spaces() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  const Sexp* node() {
    skip_spaces();
    if (pos_ >= text_.size()) fail("unexpected end");
    std::size_t start = pos_;
    char c = text_[pos_];
    if (c == '(' || c == '[') {
      if (depth_ == kMaxAstDepth) fail(fmt::format("lists nested deeper than {}", kMaxAstDepth));
      char close = c == '(' ? ')' : ']';
      ++depth_;
      Sexp s;
      s.is_list = true;
      s.bracket = c;
      ++pos_;
      for (;;) {
        skip_spaces();
        if (pos_ >= text_.size()) fail("unclosed list");
        if (text_[pos_] == close) {
          ++pos_;
          break;
        }
        if (text_[pos_] == ')' || text_[pos_] == ']') fail("mismatched bracket");
        s.items.push_back(node());
        if (s.items.size() == 1) open_let(s);
      }
      s.text = text_.substr(start, pos_ - start);
      --depth_;
      return shared_list(std::move(s));
    }
    if (c == ')' || c == ']') fail("unexpected closing bracket");
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '(' && text_[pos_] != ')' &&
           text_[pos_] != '[' && text_[pos_] != ']')
      ++pos_;
    return shared_atom(text_.substr(start, pos_ - start));
  }

  // The one node of this atom.
  const Sexp* shared_atom(std::string_view atom) {
    const Sexp*& n = atoms_[atom];
    if (!n) {
      Sexp s;
      s.atom = atom;
      s.text = atom;
      n = &nodes_.emplace_back(std::move(s));
    }
    return n;
  }
  // (let ID EXPR) is EXPR's node, (ref TYPE ID) that of let ID's EXPR, any other list the one node
  // of its bracket and items (which are already shared nodes).
  const Sexp* shared_list(Sexp&& s) {
    if (s.bracket == '(' && s.head() == "let") return bind(s);
    if (s.bracket == '(' && s.head() == "ref") return resolve(s);
    // The walkers recurse through shared nodes as through nested text: bound the DAG's depth.
    for (const Sexp* item : s.items) s.depth = std::max(s.depth, item->depth + 1);
    if (s.depth > kMaxAstDepth) fail(fmt::format("expressions nested deeper than {}", kMaxAstDepth));
    auto& lists = s.bracket == '(' ? lists_ : shapes_;
    if (auto it = lists.find(s.items); it != lists.end()) return it->second;
    const Sexp* n = &nodes_.emplace_back(std::move(s));
    lists.try_emplace(n->items, n);  // the key views the node's own items
    return n;
  }
  // (let ID EXPR): IDs count 0, 1, 2, ... in the order in which the lets open in the text; each
  // is bound when it closes.
  void open_let(const Sexp& s) {
    if (s.bracket != '(' || s.head() != "let") return;
    open_lets_.push_back(lets_.size());
    lets_.push_back(nullptr);
  }
  const Sexp* bind(const Sexp& s) {
    const std::size_t id = open_lets_.back();
    open_lets_.pop_back();
    if (s.items.size() != 3 || s[1].is_list || !s[2].is_list) fail("expected (let ID EXPR)");
    if (s[1].atom != std::to_string(id)) fail(fmt::format("let {} where let {} was expected", s[1].atom, id));
    lets_[id] = s.items[2];
    return s.items[2];
  }
  // (ref DTYPE [DIMS] ID): a let earlier in the text, of that type.
  const Sexp* resolve(const Sexp& s) {
    if (s.items.size() != 4 || s[1].is_list || !s[2].is_list || s[3].is_list) fail("expected (ref TYPE ID)");
    std::string_view id = s[3].atom;
    std::size_t i = 0;
    auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), i);
    if (ec != std::errc() || end != id.data() + id.size() || i >= lets_.size() || !lets_[i])
      fail(fmt::format("ref {} before its let", id));
    const Sexp* e = lets_[i];
    if (e->items.size() < 3 || e->items[1] != s.items[1] || e->items[2] != s.items[2])
      fail(fmt::format("ref {} of type {} {} to a let of another type", s[3].atom, s[1].text, s[2].text));
    return e;
  }

  std::string_view kernel_;
  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;  // lists open at pos_
  std::deque<Sexp>& nodes_;
  llvm::DenseMap<llvm::StringRef, const Sexp*> atoms_;
  llvm::DenseMap<llvm::ArrayRef<const Sexp*>, const Sexp*> lists_, shapes_;  // ( ) and [ ] lists
  std::vector<const Sexp*> lets_;       // by ID; null while the let is open
  std::vector<std::size_t> open_lets_;  // the IDs of the lets open at pos_, innermost last
};

[[noreturn]] void bad(std::string_view kernel, std::string_view what) {
  throw Error(fmt::format("tessera: kernel '{}': malformed AST ({})", kernel, what));
}

}  // namespace

const Sexp& Sexp::operator[](std::size_t i) const {
  if (!is_list || i >= items.size())
    throw MalformedNode(fmt::format("node '{}' has no item {}", text.substr(0, 80), i));
  return *items[i];
}

std::string_view Sexp::head() const {
  if (!is_list || items.empty() || items[0]->is_list) return {};
  return items[0]->atom;
}

int64_t Sexp::as_int() const {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(atom.data(), atom.data() + atom.size(), v);
  if (is_list || ec != std::errc() || p != atom.data() + atom.size())
    throw MalformedNode(fmt::format("expected an integer, got '{}'", text.substr(0, 80)));
  return v;
}

DType parse_dtype(std::string_view kernel, std::string_view name) {
  if (name == "f32") return DType::f32;
  if (name == "f16") return DType::f16;
  if (name == "bf16") return DType::bf16;
  if (name == "i32") return DType::i32;
  if (name == "i1") return DType::i1;
  bad(kernel, fmt::format("unknown dtype '{}'", name));
}

double parse_const(std::string_view kernel, std::string_view hex) {
  uint64_t bits = 0;
  if (hex.size() != 18 || !hex.starts_with("0x")) bad(kernel, fmt::format("bad constant '{}'", hex));
  auto [end, ec] = std::from_chars(hex.data() + 2, hex.data() + hex.size(), bits, 16);
  if (ec != std::errc() || end != hex.data() + hex.size()) bad(kernel, fmt::format("bad constant '{}'", hex));
  return std::bit_cast<double>(bits);
}

bool is_padding_item(const Sexp& n) { return n.head() == "pad"; }

std::size_t unpadded_size(const Sexp& n) {
  const bool padded = n.items.size() > 1 && is_padding_item(*n.items.back());
  return n.items.size() - (padded ? 1 : 0);
}

std::optional<double> load_padding(std::string_view kernel, const Sexp& n) {
  if (unpadded_size(n) == n.items.size()) return std::nullopt;
  const Sexp& pad = *n.items.back();
  if (pad.items.size() != 2 || pad[1].is_list) bad(kernel, fmt::format("bad padding '{}'", pad.text));
  return parse_const(kernel, pad[1].atom);
}

// A function-try-block: Sexp's accessors throw MalformedNode, named here.
KernelAst parse_ast(std::string_view kernel, std::string_view text) try {
  KernelAst ast;
  ast.text = text;
  auto nodes = std::make_shared<std::deque<Sexp>>();
  ast.root = Parser(kernel, text, *nodes).parse();
  ast.nodes = std::move(nodes);
  const Sexp& r = *ast.root;
  if (r.head() != "kernel" || r.items.size() != 3 || r[1].head() != "params" || r[2].head() != "body")
    bad(kernel, "expected (kernel (params ...) (body ...))");
  const Sexp& params = r[1];
  for (std::size_t i = 1; i < params.items.size(); ++i) {
    const Sexp& p = params[i];
    ParamInfo info{};
    std::string_view kind = p.head();
    if (kind == "out" && p.items.size() == 4 && p[3].is_list && p[3].bracket == '[') {
      info.kind = ParamInfo::Kind::out;
      info.dtype = parse_dtype(kernel, p[1].atom);
      info.rank = static_cast<int>(p[2].as_int());
      for (const Sexp& d : p[3].children()) info.tile.push_back(d.as_int());
      if (static_cast<int>(info.tile.size()) != info.rank) bad(kernel, "output tile rank");
      for (int64_t d : info.tile)
        if (d < 1 || d > (int64_t{1} << 31) || !std::has_single_bit(static_cast<uint64_t>(d)))
          bad(kernel, fmt::format("output tile size {} is not a power of two up to 2^31", d));
    } else if (kind == "in" && p.items.size() == 3) {
      info.kind = ParamInfo::Kind::in;
      info.dtype = parse_dtype(kernel, p[1].atom);
      info.rank = static_cast<int>(p[2].as_int());
    } else if (kind == "scalar" && p.items.size() == 2) {
      info.kind = ParamInfo::Kind::scalar;
      info.dtype = parse_dtype(kernel, p[1].atom);
    } else {
      bad(kernel, fmt::format("bad parameter '{}'", p.text));
    }
    if (info.kind != ParamInfo::Kind::scalar && (info.rank < 1 || info.rank > 4))
      bad(kernel, "tensor rank must be 1..4");
    ast.params.push_back(std::move(info));
  }
  ast.body = &r[2];
  return ast;
} catch (const MalformedNode& e) {
  bad(kernel, e.what());
}

}  // namespace tessera::detail

namespace tessera::detail {
namespace {

// Visits each node of the DAG once (`seen`).
void collect_calls(std::string_view kernel, const Sexp& n, std::vector<DeviceFunctionUse>& out,
                   llvm::DenseSet<const Sexp*>& seen) {
  if (!n.is_list || !seen.insert(&n).second) return;
  if (n.head() == "call") {
    auto bad = [&](std::string_view what) {
      throw Error(fmt::format("tessera: kernel '{}': malformed AST (device call: {})", kernel, what));
    };
    if (n.items.size() < 6 || n[3].is_list || n[4].is_list || n[5].is_list) bad("too few parts");
    std::string_view lang = n[4].atom, hex = n[5].atom;
    if (lang != "cuda" && lang != "ptx") bad("unknown language");
    if (hex.size() % 2 != 0) bad("odd code length");
    DeviceFunctionUse use{std::string(n[3].atom), lang == "ptx", {}};
    use.code.reserve(hex.size() / 2);
    for (std::size_t i = 0; i < hex.size(); i += 2) {
      unsigned byte = 0;
      auto [end, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, byte, 16);
      if (ec != std::errc() || end != hex.data() + i + 2) bad("code is not hex");
      use.code.push_back(static_cast<char>(byte));
    }
    auto same = std::find_if(out.begin(), out.end(), [&](const DeviceFunctionUse& u) { return u.name == use.name; });
    if (same == out.end()) {
      out.push_back(std::move(use));
    } else if (same->code != use.code || same->is_ptx != use.is_ptx) {
      throw Error(fmt::format("tessera: kernel '{}': the device function '{}' is declared with two different codes",
                              kernel, use.name));
    }
  }
  for (const Sexp& c : n.children()) collect_calls(kernel, c, out, seen);
}

}  // namespace

std::vector<DeviceFunctionUse> device_functions(std::string_view kernel, const KernelAst& ast) {
  std::vector<DeviceFunctionUse> out;
  llvm::DenseSet<const Sexp*> seen;
  if (ast.body) naming_kernel(kernel, [&] { collect_calls(kernel, *ast.body, out, seen); });
  return out;
}

void parse_static_shapes(std::string_view kernel, std::string_view text, KernelAst& ast) {
  auto fail = [&](std::string_view what) {
    throw Error(fmt::format("tessera: kernel '{}': malformed static shapes '{}' ({})", kernel, text, what));
  };
  auto numbers = [&](llvm::StringRef s, char sep) {
    llvm::SmallVector<llvm::StringRef> parts;
    s.split(parts, sep);
    std::vector<int64_t> v;
    for (llvm::StringRef part : parts) {
      int64_t n = 0;
      if (part.getAsInteger(10, n)) fail(fmt::format("'{}' is not an integer", std::string_view(part)));
      v.push_back(n);
    }
    return v;
  };
  auto [shapes, grid] = llvm::StringRef(text).rsplit('@');
  if (grid.empty()) fail("no grid");
  ast.static_grid = numbers(grid, ',');
  if (ast.static_grid.size() != 3 || std::any_of(ast.static_grid.begin(), ast.static_grid.end(),
                                                 [](int64_t g) { return g < 1; }))
    fail("the grid needs three positive sizes");
  llvm::SmallVector<llvm::StringRef> params;
  shapes.split(params, ';');
  if (params.size() != ast.params.size())
    fail(fmt::format("{} parameters for a kernel of {}", params.size(), ast.params.size()));
  ast.static_tensors.assign(params.size(), {});
  for (std::size_t i = 0; i < params.size(); ++i) {
    bool scalar = ast.params[i].kind == ParamInfo::Kind::scalar;
    if (params[i] == "-") {
      if (!scalar) fail(fmt::format("parameter {} is a tensor", i));
      continue;
    }
    llvm::SmallVector<llvm::StringRef> fields;
    params[i].split(fields, ':');
    if (scalar || fields.size() != 3) fail(fmt::format("parameter {}", i));
    KernelAst::StaticTensor& t = ast.static_tensors[i];
    if (fields[0].getAsInteger(10, t.offset)) fail(fmt::format("'{}' is not an integer", std::string_view(fields[0])));
    t.sizes = numbers(fields[1], 'x');
    t.strides = numbers(fields[2], 'x');
    if (t.offset < 0 || std::ssize(t.sizes) != ast.params[i].rank ||
        t.strides.size() != t.sizes.size() ||
        std::any_of(t.sizes.begin(), t.sizes.end(), [](int64_t s) { return s < 0; }))
      fail(fmt::format("parameter {} needs an offset, {} sizes and {} strides", i, ast.params[i].rank,
                       ast.params[i].rank));
  }
}

}  // namespace tessera::detail

// ast.cpp: S-expression parser for the serialized kernel AST.
//
// The text comes from our own compile-time serializer, so errors here mean a version mismatch or a
// bug; they are still reported as tessera::Error (never a crash) with the offending position. The
// parser builds the DAG of ast.h bottom-up: each list is looked up by its bracket and its items,
// which are shared nodes already, so the parse costs time linear in the text. A new list gets the
// kind its head names and is checked against the grammar (ast_grammar.h) as it closes, its items
// having been checked before it; once the parameters are read, their uses are. The parser and every
// walker of the tree recurse once per level of the DAG: its depth is bounded (kMaxAstDepth), and
// the launcher runs them on a stack of known size (kCompilerStackBytes).
#include "frontend/ast.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <deque>
#include <string>

#include "frontend/ast_grammar.h"
#include "frontend/ast_nodes.h"
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
      auto [end, ec] = std::from_chars(atom.data(), atom.data() + atom.size(), s.value);
      s.is_integer = ec == std::errc() && end == atom.data() + atom.size();
      n = &nodes_.emplace_back(std::move(s));
    }
    return n;
  }
  // (let ID EXPR) is EXPR's node, (ref TYPE ID) that of let ID's EXPR, any other list the one node
  // of its bracket and items (which are already shared nodes), checked against the grammar when
  // it is new.
  const Sexp* shared_list(Sexp&& s) {
    if (s.bracket == '(') {
      s.kind = s.items.empty() || s.items[0]->is_list ? NodeKind::group : node_kind_named(s.head());
      if (s.kind == NodeKind::none) fail(fmt::format("unknown node '{}'", s.head()));
    }
    if (s.kind == NodeKind::let) return bind(s);
    if (s.kind == NodeKind::ref) return resolve(s);
    // The walkers recurse through shared nodes as through nested text: bound the DAG's depth.
    for (const Sexp* item : s.items) s.depth = std::max(s.depth, item->depth + 1);
    if (s.depth > kMaxAstDepth) fail(fmt::format("expressions nested deeper than {}", kMaxAstDepth));
    auto& lists = s.bracket == '(' ? lists_ : shapes_;
    if (auto it = lists.find(s.items); it != lists.end()) return it->second;
    check(s);
    const Sexp* n = &nodes_.emplace_back(std::move(s));
    lists.try_emplace(n->items, n);  // the key views the node's own items
    return n;
  }
  // A node that does not conform to the grammar is an error naming it and its form.
  void check(const Sexp& s) {
    if (s.kind == NodeKind::none) return;  // a shape: its parent's field checks it
    if (std::string what = check_node(s); !what.empty())
      fail(fmt::format("'{}' is not {}: {}", s.text.substr(0, 80), signature(s.kind), what));
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
    if (!check_node(s).empty()) fail("expected (let ID EXPR)");
    const int64_t named = s.items[position(NodeKind::let, "ID")]->value;
    if (named != static_cast<int64_t>(id)) fail(fmt::format("let {} where let {} was expected", named, id));
    lets_[id] = s.items[position(NodeKind::let, "EXPR")];
    return lets_[id];
  }
  // (ref DTYPE [DIMS] ID): a let earlier in the text, of that type.
  const Sexp* resolve(const Sexp& s) {
    if (!check_node(s).empty()) fail("expected (ref TYPE ID)");
    const Sexp& id = *s.items[position(NodeKind::ref, "ID")];
    const std::size_t type = position(NodeKind::ref, "TYPE");
    if (id.value < 0 || id.value >= std::ssize(lets_) || !lets_[id.value])
      fail(fmt::format("ref {} before its let", id.atom));
    const Sexp* e = lets_[id.value];
    if (e->items[kTypePosition] != s.items[type] || e->items[kTypePosition + 1] != s.items[type + 1])
      fail(fmt::format("ref {} of type {} {} to a let of another type", id.atom, s.items[type]->text,
                       s.items[type + 1]->text));
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

std::string_view Sexp::head() const {
  if (!is_list || items.empty() || items[0]->is_list) return {};
  return items[0]->atom;
}

DType parse_dtype(std::string_view kernel, std::string_view name) {
  if (name == "f32") return DType::f32;
  if (name == "f16") return DType::f16;
  if (name == "bf16") return DType::bf16;
  if (name == "i32") return DType::i32;
  if (name == "i1") return DType::i1;
  if (name == "f8e4m3") return DType::f8e4m3;
  if (name == "f8e5m2") return DType::f8e5m2;
  bad(kernel, fmt::format("unknown dtype '{}'", name));
}

std::optional<double> hex_double(std::string_view hex) {
  uint64_t bits = 0;
  if (hex.size() != 18 || !hex.starts_with("0x")) return std::nullopt;
  auto [end, ec] = std::from_chars(hex.data() + 2, hex.data() + hex.size(), bits, 16);
  if (ec != std::errc() || end != hex.data() + hex.size()) return std::nullopt;
  return std::bit_cast<double>(bits);
}

double parse_const(std::string_view kernel, std::string_view hex) {
  std::optional<double> v = hex_double(hex);
  if (!v) bad(kernel, fmt::format("bad constant '{}'", hex));
  return *v;
}

KernelAst parse_ast(std::string_view kernel, std::string_view text) {
  KernelAst ast;
  ast.text = text;
  auto nodes = std::make_shared<std::deque<Sexp>>();
  ast.root = Parser(kernel, text, *nodes).parse();
  if (ast.root->kind != NodeKind::kernel) bad(kernel, "expected (kernel (params ...) (body ...))");
  const KernelNode root(*ast.root);
  for (const Sexp& p : root.params()) {
    const ParamNode param(p);
    ParamInfo info{};
    info.kind = p.kind == NodeKind::out ? ParamInfo::Kind::out
                : p.kind == NodeKind::in ? ParamInfo::Kind::in
                                         : ParamInfo::Kind::scalar;
    info.dtype = parse_dtype(kernel, param.dtype());
    if (info.kind != ParamInfo::Kind::scalar && (param.rank() < 1 || param.rank() > 4))
      bad(kernel, "tensor rank must be 1..4");
    info.rank = static_cast<int>(param.rank());
    for (int64_t d : param.tile()) info.tile.push_back(d);
    if (info.kind == ParamInfo::Kind::out && std::ssize(info.tile) != info.rank) bad(kernel, "output tile rank");
    ast.params.push_back(std::move(info));
  }
  check_parameter_uses(kernel, *nodes, ast.params);
  ast.body = &root.body();
  ast.nodes = std::move(nodes);
  return ast;
}

}  // namespace tessera::detail

namespace tessera::detail {
namespace {

// Visits each node of the DAG once (`seen`).
void collect_calls(std::string_view kernel, const Sexp& n, std::vector<DeviceFunctionUse>& out,
                   llvm::DenseSet<const Sexp*>& seen) {
  if (!seen.insert(&n).second) return;
  if (n.kind == NodeKind::call) {
    const CallNode call(n);
    DeviceFunctionUse use{std::string(call.name()), call.is_ptx(), call.code()};
    auto same = std::find_if(out.begin(), out.end(), [&](const DeviceFunctionUse& u) { return u.name == use.name; });
    if (same == out.end()) {
      out.push_back(std::move(use));
    } else if (same->code != use.code || same->is_ptx != use.is_ptx) {
      throw Error(fmt::format("tessera: kernel '{}': the device function '{}' is declared with two different codes",
                              kernel, use.name));
    }
  }
  for (const Sexp& c : subnodes(n)) collect_calls(kernel, c, out, seen);
}

}  // namespace

std::vector<DeviceFunctionUse> device_functions(std::string_view kernel, const KernelAst& ast) {
  std::vector<DeviceFunctionUse> out;
  llvm::DenseSet<const Sexp*> seen;
  if (ast.body) collect_calls(kernel, *ast.body, out, seen);
  return out;
}

}  // namespace tessera::detail

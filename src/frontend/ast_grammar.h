// ast_grammar.h: the grammar of the serialized kernel AST (docs/ast-format.md), as one table.
//
// Every list of the text is a node whose kind its head names: (load ...) is a load, (add ...) a
// binary operation; a list without a head is a group (a loop's inits or yields). kGrammar gives,
// per kind, its items after the head in order, each with the name the format's description uses,
// what it must be (Item) and whether it repeats or may be left out (Repeat). The parser checks
// every node against the table once, as the node closes, and stamps its kind on it (ast.h); the
// walkers then read nodes through the views of ast_nodes.h, whose item positions are computed from
// this table at compile time. What the table cannot say is checked beside it, once: a loop carries
// values and yields as many (check_node), a node names parameters of the kind it needs, a load one
// index per dimension of its input (check_parameter_uses). What concerns types, loop variables and
// loop results is checked by codegen.
//
// The table's shape: fixed fields first, then at most one repeated field (Repeat::any or some),
// then at most one optional trailing field (Repeat::optional), as in (load TYPE P IDX* PAD?). A
// TYPE field spans two items: DTYPE and the shape [DIM*].
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <iterator>
#include <span>
#include <string>
#include <string_view>

namespace tessera::detail {

struct Sexp;
struct ParamInfo;

enum class NodeKind : uint8_t {
  none,   // an atom or a shape [...]
  group,  // (EXPR*) without a head: a loop's inits or yields
  // The outline.
  kernel, params, out, in, scalar, body, store, pad,
  // Resolved by the parser: never a node of the DAG.
  let, ref,
  // Expressions (and the loop, which only a result reads).
  load, load_like, own, arg, dim, program_id, num_programs, constant, iota, unary, binary, compare,
  select, call, cast, broadcast, reshape, transpose, reduce, mma, loop, iv, carried, result,
};

// Nodes that denote a value and may stand where an EXPR is expected.
constexpr bool is_expression(NodeKind k) { return k >= NodeKind::load && k != NodeKind::loop; }

// What an item must be.
enum class Item : uint8_t {
  integer,  // a decimal integer atom
  dtype,    // f32 f16 bf16 i32 i1
  type,     // DTYPE [DIM*] (two items): dims powers of two, at most 2^31 elements in all
  dims,     // [DIM*]: each a power of two up to 2^31 (an output's tile)
  hex,      // 0x and 16 hex digits: the bits of a double
  code,     // hex-encoded bytes (a device function's code)
  word,     // an atom; one of Field::words where they are given
  expr,     // an expression node
  value,    // an expression or a loop (what a let names)
  group,    // (EXPR*)
  loop,     // a (for ...) node
  pad,      // a (pad ...) node
  param,    // a parameter declaration: (out ...), (in ...) or (scalar ...)
  params,   // (params ...)
  body,     // (body ...)
  stmt,     // a statement: (store ...)
  // An integer naming a parameter of the kernel (checked once the parameters are known).
  input,   // an (in ...) parameter
  output,  // an (out ...) parameter
  scalar,  // a (scalar ...) parameter
  tensor,  // an (in ...) or (out ...) parameter
};
enum class Repeat : uint8_t { one, optional, any, some };  // once, ?, *, +

struct Field {
  std::string_view name;
  Item item = Item::expr;
  Repeat repeat = Repeat::one;
  std::string_view words = {};  // Item::word: the atoms allowed, separated by spaces ("" any)
};

struct NodeSpec {
  NodeKind kind = NodeKind::none;
  std::string_view name;   // in messages: the head, or the family's name (UNOP)
  std::string_view heads;  // the heads that name this kind, separated by spaces
  std::array<Field, 5> fields{};
  std::size_t count = 0;
};

namespace grammar {
constexpr NodeSpec node(NodeKind k, std::string_view name, std::string_view heads, std::initializer_list<Field> f) {
  NodeSpec s{k, name, heads, {}, f.size()};
  std::size_t i = 0;
  for (const Field& x : f) s.fields[i++] = x;
  return s;
}
constexpr NodeSpec node(NodeKind k, std::string_view head, std::initializer_list<Field> f) {
  return node(k, head, head, f);
}
inline constexpr Field kType{"TYPE", Item::type};
inline constexpr Field kPad{"PAD", Item::pad, Repeat::optional};
}  // namespace grammar

// The grammar, in the order of docs/ast-format.md.
inline constexpr NodeSpec kGrammar[] = {
    grammar::node(NodeKind::kernel, "kernel", {{"PARAMS", Item::params}, {"BODY", Item::body}}),
    grammar::node(NodeKind::params, "params", {{"PARAM", Item::param, Repeat::any}}),
    grammar::node(NodeKind::out, "out", {{"DTYPE", Item::dtype}, {"RANK", Item::integer}, {"TILE_DIM", Item::dims}}),
    grammar::node(NodeKind::in, "in", {{"DTYPE", Item::dtype}, {"RANK", Item::integer}}),
    grammar::node(NodeKind::scalar, "scalar", {{"DTYPE", Item::dtype}}),
    grammar::node(NodeKind::body, "body", {{"STMT", Item::stmt, Repeat::any}}),
    grammar::node(NodeKind::store, "store", {{"P", Item::output}, {"EXPR", Item::expr}}),
    grammar::node(NodeKind::pad, "pad", {{"0xHEX", Item::hex}}),
    grammar::node(NodeKind::let, "let", {{"ID", Item::integer}, {"EXPR", Item::value}}),
    grammar::node(NodeKind::ref, "ref", {grammar::kType, {"ID", Item::integer}}),
    grammar::node(NodeKind::load, "load",
                  {grammar::kType, {"P", Item::input}, {"IDX", Item::expr, Repeat::any}, grammar::kPad}),
    grammar::node(NodeKind::load_like, "load_like",
                  {grammar::kType, {"P", Item::input}, {"Q", Item::output}, grammar::kPad}),
    grammar::node(NodeKind::own, "own", {grammar::kType, {"Q", Item::output}, grammar::kPad}),
    grammar::node(NodeKind::arg, "arg", {grammar::kType, {"P", Item::scalar}}),
    grammar::node(NodeKind::dim, "dim", {grammar::kType, {"P", Item::tensor}, {"D", Item::integer}}),
    grammar::node(NodeKind::program_id, "program_id", {grammar::kType, {"D", Item::integer}}),
    grammar::node(NodeKind::num_programs, "num_programs", {grammar::kType, {"D", Item::integer}}),
    grammar::node(NodeKind::constant, "const", {grammar::kType, {"0xHEX", Item::hex}}),
    grammar::node(NodeKind::iota, "iota", {grammar::kType}),
    grammar::node(NodeKind::unary, "UNOP", "neg exp exp2 log sqrt rsqrt tanh abs not fast_exp fast_sqrt fast_tanh",
                  {grammar::kType, {"X"}}),
    grammar::node(NodeKind::binary, "BINOP", "add sub mul div fast_div max min and or",
                  {grammar::kType, {"X"}, {"Y"}}),
    grammar::node(NodeKind::compare, "CMP", "eq ne lt le gt ge", {grammar::kType, {"X"}, {"Y"}}),
    grammar::node(NodeKind::select, "select", {grammar::kType, {"C"}, {"X"}, {"Y"}}),
    grammar::node(NodeKind::call, "call",
                  {grammar::kType, {"NAME", Item::word}, {"LANG", Item::word, Repeat::one, "cuda ptx"},
                   {"HEX", Item::code}, {"X", Item::expr, Repeat::some}}),
    grammar::node(NodeKind::cast, "cast", {grammar::kType, {"X"}}),
    grammar::node(NodeKind::broadcast, "broadcast", {grammar::kType, {"X"}}),
    grammar::node(NodeKind::reshape, "reshape", {grammar::kType, {"X"}}),
    grammar::node(NodeKind::transpose, "transpose", {grammar::kType, {"X"}}),
    grammar::node(NodeKind::reduce, "reduce",
                  {grammar::kType, {"KIND", Item::word, Repeat::one, "sum max min"}, {"AXIS", Item::integer}, {"X"}}),
    grammar::node(NodeKind::mma, "mma", {grammar::kType, {"A"}, {"B"}, {"C"}}),
    grammar::node(NodeKind::loop, "for",
                  {grammar::kType, {"ID", Item::integer}, {"N"}, {"INIT", Item::group}, {"YIELD", Item::group}}),
    grammar::node(NodeKind::iv, "iv", {grammar::kType, {"ID", Item::integer}}),
    grammar::node(NodeKind::carried, "carried", {grammar::kType, {"ID", Item::integer}, {"K", Item::integer}}),
    grammar::node(NodeKind::result, "result", {grammar::kType, {"K", Item::integer}, {"FOR", Item::loop}}),
};

// The index of kind k's entry in the table; the table's size for none and group.
constexpr std::size_t spec_index(NodeKind k) {
  std::size_t i = 0;
  while (i < std::size(kGrammar) && kGrammar[i].kind != k) ++i;
  return i;
}
// The table's entry for kind k (null for none and group).
constexpr const NodeSpec* spec_of(NodeKind k) {
  const std::size_t i = spec_index(k);
  return i < std::size(kGrammar) ? &kGrammar[i] : nullptr;
}

// The items a field spans: a TYPE two, any other one.
constexpr std::size_t width(const Field& f) { return f.item == Item::type ? 2 : 1; }

// The position in a node's items (the head is item 0) of kind k's field `name`: a field before the
// repeated one, or the first item of the repeated one. A compile error otherwise (consteval).
consteval std::size_t position(NodeKind k, std::string_view name) {
  const std::size_t entry = spec_index(k);
  if (entry == std::size(kGrammar)) throw "no such node kind";
  const NodeSpec& s = kGrammar[entry];
  std::size_t at = 1;
  for (std::size_t i = 0; i < s.count; ++i) {
    const Field& f = s.fields[i];
    if (f.name == name) {
      if (f.repeat == Repeat::optional) throw "an optional field has no fixed position";
      return at;
    }
    if (f.repeat != Repeat::one) throw "a field after a repeated one has no fixed position";
    at += width(f);
  }
  throw "no such field";
}

// The table has the shape the parser and the views assume (see the top of this file), every
// expression names its TYPE first, and a kind has one entry.
consteval bool grammar_is_well_formed() {
  for (const NodeSpec& s : kGrammar) {
    bool repeated = false, optional = false;
    for (std::size_t i = 0; i < s.count; ++i) {
      const Repeat r = s.fields[i].repeat;
      if (optional) return false;
      if (r == Repeat::optional) optional = true;
      if (r == Repeat::any || r == Repeat::some) {
        if (repeated) return false;
        repeated = true;
      }
      if (r == Repeat::one && repeated) return false;
    }
    if ((is_expression(s.kind) || s.kind == NodeKind::loop || s.kind == NodeKind::ref) &&
        (s.count == 0 || s.fields[0].item != Item::type))
      return false;
    int entries = 0;
    for (const NodeSpec& t : kGrammar) entries += t.kind == s.kind;
    if (entries != 1) return false;
  }
  return true;
}
static_assert(grammar_is_well_formed());

// Where an expression's (or a loop's) TYPE is: items 1 (DTYPE) and 2 ([DIM*]).
inline constexpr std::size_t kTypePosition = position(NodeKind::iota, "TYPE");

// The kind that `head` names (NodeKind::none if none does).
NodeKind node_kind_named(std::string_view head);

// The form of kind k as docs/ast-format.md writes it: "(load TYPE P IDX* PAD?)", "(for TYPE ID N
// (INIT*) (YIELD*))" (a test keeps the two in agreement).
std::string signature(NodeKind k);

// Checks the list node n, its kind stamped and its items already checked, against the table and
// the rules beside it that need no parameters: "" if it conforms, else what is wrong (the parser
// names the kernel and the place).
std::string check_node(const Sexp& n);

// Checks the items that name parameters (Item::input, output, scalar, tensor) of every node, the
// count of a load's indices and the axis of a dim against the kernel's parameters; throws
// tessera::Error naming `kernel` and the node.
void check_parameter_uses(std::string_view kernel, const std::deque<Sexp>& nodes, std::span<const ParamInfo> params);

}  // namespace tessera::detail

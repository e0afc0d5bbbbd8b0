// tessera/expr/text_sink.h: writing a kernel's AST text in one pass over its DAG of node types.
//
// Nodes serialize themselves with `template <class Ctx> static constexpr void write(text_sink&)`,
// typically one call s.list(parts...): "(" parts separated by single spaces ")", where a part is a
// string literal, a fixed_string, node<N, Ctx>{} (node N's own text inside the loops Ctx, written
// by N::write) or group<node...>{} (a nested list of nodes). make_text<Node, Ctx>() builds a
// node's text as a fixed_string of exactly the right length.
//
// Structurally identical subtrees have identical types, so a kernel that reuses a value reuses a
// node type, and its tree may be exponentially larger than its DAG. The sink writes the DAG
// (docs/ast-format.md): a node that may be shared (part_of gives it a TYPE and a hash: a typed node
// with operands, see expr_base.h) and is used more than once is written at its first use as
// (let ID EXPR) and as (ref TYPE ID) at the others; a node used once is written in place, so a
// kernel without reuse reads as a plain tree. A first pass over the DAG (discovering) finds the
// nodes used more than once: it records each shareable node by a hash of its text that expr_base.h
// computes per node type and context (with the TYPE's length; equal text is equal value, as the
// parser too merges equal subtrees) and descends into a node at its first use only. The text pass then meets the nodes in the same
// order. Both cost a step per edge of the DAG, so building the text takes time and memory linear
// in the DAG, not in the tree. list() calls a child's writer directly, so each tree level costs
// two constexpr calls; GCC's default -fconstexpr-depth=512 thus allows trees about 250 levels deep.
// Nothing here compares addresses (a pointer with null, or two functions): GCC's
// -fsanitize=undefined makes such comparisons non-constant, which would keep a user's sanitized
// build from compiling any kernel. Flags and kinds say what a pointer would.
// Assumes fixed_string.h; part_of(node<N, Ctx>) is defined by expr_base.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/expr/fixed_string.h"

namespace tessera::detail {

template <class N, class Ctx> struct node {};
template <class... Nodes> struct group {};

struct text_sink;
using part_writer = void (*)(text_sink&);

// One part of a list: text (chars, n), or something that writes itself (write): a node or a group.
// A node that may be shared also carries its TYPE text, for (ref TYPE ID), and its hash.
enum class part_kind : unsigned char { text, writer, shared };
struct text_part {
  part_kind kind = part_kind::text;
  const char* chars = nullptr;
  std::size_t n = 0;
  part_writer write = nullptr;
  const char* type = nullptr;
  std::size_t type_n = 0;
  const std::uint64_t* hash = nullptr;  // of the node's text, for finding it among those seen
};

template <std::size_t N>
constexpr text_part part_of(const fixed_string<N>& f) { return {part_kind::text, f.data, N}; }
template <std::size_t M>
constexpr text_part part_of(const char (&lit)[M]) { return {part_kind::text, lit, M - 1}; }
// The text_part of node<N, Ctx>: defined in expr_base.h, which knows what nodes are.
template <class N, class Ctx>
constexpr text_part part_of(node<N, Ctx>);
template <class... Nodes>
constexpr void write_group(text_sink& s);
template <class... Nodes>
constexpr text_part part_of(group<Nodes...>) { return {part_kind::writer, nullptr, 0, &write_group<Nodes...>}; }

// The shareable nodes of one DAG, in order of first use: each one's hash (with its TYPE length,
// its identity), TYPE length, number of uses and let ID (-1 until written); and for every use in
// traversal order the node used. Nodes are found through an open-addressing table on their hash.
struct dag_node {
  std::uint64_t hash;
  std::size_t type_size;
  int uses;
  int id;
};
struct dag_table {
  std::vector<dag_node> nodes;
  std::vector<std::size_t> trace;  // the node of each use, in traversal order
  std::size_t next_use = 0;        // the text pass's position in `trace`
  int next_id = 0;
  bool discovering = true;
  std::vector<std::size_t> slots = std::vector<std::size_t>(64);  // index + 1 into nodes; 0: empty

  // Records a use of the node of hash `h`; true if it is the first.
  constexpr bool first_use(std::size_t type_size, std::uint64_t h) {
    const std::size_t mask = slots.size() - 1;
    std::size_t i = static_cast<std::size_t>(h) & mask;
    for (; slots[i] != 0; i = (i + 1) & mask) {
      dag_node& n = nodes[slots[i] - 1];
      if (n.hash == h && n.type_size == type_size) {
        ++n.uses;
        trace.push_back(slots[i] - 1);
        return false;
      }
    }
    trace.push_back(nodes.size());
    nodes.push_back({h, type_size, 1, -1});
    slots[i] = nodes.size();
    if (2 * nodes.size() > slots.size()) grow();
    return true;
  }
  constexpr void grow() {
    std::vector<std::size_t> bigger(2 * slots.size());
    const std::size_t mask = bigger.size() - 1;
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      std::size_t i = static_cast<std::size_t>(nodes[k].hash) & mask;
      while (bigger[i] != 0) i = (i + 1) & mask;
      bigger[i] = k + 1;
    }
    slots.swap(bigger);
  }
};

// FNV-1a, one character at a time.
constexpr std::uint64_t hash_char(std::uint64_t h, char c) {
  return (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
}
constexpr std::uint64_t kHashSeed = 0xcbf29ce484222325ull;

struct text_sink {
  char* out = nullptr;  // written when `writing`, else only counted
  std::size_t size = 0;
  dag_table* dag = nullptr;
  // When `labelling`: hash the node's own text instead, its shareable operands each as one '$'
  // (label_hash_of).
  std::uint64_t* label = nullptr;
  bool writing = false;
  bool labelling = false;

  constexpr void put(char c) {
    if (writing) out[size] = c;
    if (labelling) *label = hash_char(*label, c);
    ++size;
  }
  constexpr void put(const char* chars, std::size_t n) {
    if (writing)
      for (std::size_t i = 0; i < n; ++i) out[size + i] = chars[i];
    if (labelling)
      for (std::size_t i = 0; i < n; ++i) *label = hash_char(*label, chars[i]);
    size += n;
  }
  constexpr void put_int(int v) {
    char digits[12]{};
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v > 0);
    while (n > 0) put(digits[--n]);
  }
  template <class... Parts>
  constexpr void list(const Parts&... parts) {
    if constexpr (sizeof...(Parts) == 0) {
      put("()", 2);
    } else {
      const text_part ps[] = {part_of(parts)...};
      put('(');
      for (std::size_t i = 0; i < sizeof...(Parts); ++i) {
        if (i) put(' ');
        const text_part& p = ps[i];
        if (p.kind == part_kind::text) {
          put(p.chars, p.n);
        } else if (p.kind == part_kind::writer) {
          p.write(*this);
        } else if (labelling) {
          put('$');
        } else if (dag->discovering) {
          if (dag->first_use(p.type_n, *p.hash)) p.write(*this);
        } else {
          dag_node& n = dag->nodes[dag->trace[dag->next_use++]];
          if (n.uses < 2) {
            p.write(*this);
          } else if (n.id < 0) {
            n.id = dag->next_id++;
            put("(let ", 5);
            put_int(n.id);
            put(' ');
            p.write(*this);
            put(')');
          } else {
            put("(ref ", 5);
            put(p.type, p.type_n);
            put(' ');
            put_int(n.id);
            put(')');
          }
        }
      }
      put(')');
    }
  }
};

template <class... Nodes>
constexpr void write_group(text_sink& s) { s.list(Nodes{}...); }

// The hash of the text that `write` writes for its node, its shareable operands each as one '$'.
constexpr std::uint64_t label_hash_of(part_writer write) {
  std::uint64_t h = kHashSeed;
  text_sink s{nullptr, 0, nullptr, &h, false, true};
  write(s);
  return h;
}

constexpr std::size_t decimal_size(int v) {
  std::size_t n = 1;
  for (; v >= 10; v /= 10) ++n;
  return n;
}

// The text of node N inside context Ctx, written into `out` by a discovering pass over its DAG
// and one that writes; or, if not `writing`, its length, from the discovering pass alone: that
// pass meets every node's own text once, so the text is as long as what it met plus the lets
// around the nodes used more than once, numbered in order of first use, and their refs.
template <class N, class Ctx>
constexpr std::size_t write_text(char* out, bool writing) {
  dag_table dag;
  text_sink discover{nullptr, 0, &dag};
  N::template write<Ctx>(discover);
  if (!writing) {
    std::size_t size = discover.size;
    int id = 0;
    for (const dag_node& n : dag.nodes) {
      if (n.uses < 2) continue;
      const std::size_t digits = decimal_size(id++);
      size += 7 + digits;                                                          // "(let ID " ")"
      size += static_cast<std::size_t>(n.uses - 1) * (7 + n.type_size + digits);  // "(ref TYPE ID)"
    }
    return size;
  }
  dag.discovering = false;
  text_sink sink{out, 0, &dag, nullptr, true};
  N::template write<Ctx>(sink);
  return sink.size;
}

// The text of node N inside context Ctx, as a fixed_string of exactly the right length.
template <class N, class Ctx>
constexpr auto make_text() {
  fixed_string<write_text<N, Ctx>(nullptr, false)> r{};
  write_text<N, Ctx>(r.data, true);
  return r;
}

}  // namespace tessera::detail

// case_minimizer.cpp: greedy AST reduction of a failing case (see case_minimizer.h).
#include "case_minimizer.h"

#include <string>
#include <vector>

#include "fuzz_runner.h"
#include "sexp.h"

namespace tessera::fuzz {
namespace {

bool is_dtype(std::string_view s) {
  return s == "f32" || s == "f16" || s == "bf16" || s == "i32" || s == "i1" || s == "f8e4m3" || s == "f8e5m2";
}

// An expression node: (OP DTYPE [DIMS] ...).
bool typed(const SNode& n) {
  return n.is_list && n.size() >= 3 && !n[0].is_list && !n[1].is_list && is_dtype(n[1].atom) && n[2].is_list &&
         n[2].bracket == '[';
}

std::string_view type_text(const SNode& n) {
  const char* begin = n[1].text.data();
  const char* end = n[2].text.data() + n[2].text.size();
  return {begin, static_cast<std::size_t>(end - begin)};
}

void collect(const SNode& n, std::vector<const SNode*>& out) {
  if (!n.is_list) return;
  if (typed(n)) out.push_back(&n);
  for (const SNode& c : n.items) collect(c, out);
}

}  // namespace

FuzzCase minimize_case(const FuzzCase& c, const std::function<bool(const FuzzCase&)>& still_fails, int max_attempts) {
  FuzzCase best = c;
  int attempts = 0;
  bool progress = true;
  while (progress && attempts < max_attempts) {
    progress = false;
    const std::string text = best.ast;
    const SNode root = read_sexp(text);
    std::vector<const SNode*> nodes;
    collect(root, nodes);
    for (const SNode* n : nodes) {
      std::vector<std::string> candidates;
      const std::string_view type = type_text(*n);
      for (std::size_t i = 3; i < n->size(); ++i)
        if (typed((*n)[i]) && type_text((*n)[i]) == type) candidates.emplace_back((*n)[i].text);
      if (n->head() != "const") {
        candidates.push_back("(const " + std::string(type) + " 0x0000000000000000)");
        candidates.push_back("(const " + std::string(type) + " 0x3ff0000000000000)");
      }
      const std::size_t offset = static_cast<std::size_t>(n->text.data() - text.data());
      for (const std::string& with : candidates) {
        if (with == n->text) continue;
        std::string ast = text;
        ast.replace(offset, n->text.size(), with);
        FuzzCase v = with_ast(best, ast);
        ++attempts;
        if (still_fails(v)) {
          best = std::move(v);
          progress = true;
          break;
        }
        if (attempts >= max_attempts) break;
      }
      if (progress || attempts >= max_attempts) break;
    }
  }
  return best;
}

}  // namespace tessera::fuzz

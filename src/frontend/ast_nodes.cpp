// ast_nodes.cpp: the accessors of ast_nodes.h that do more than read one item. They read nodes the
// parser has checked, so they do not fail.
#include "frontend/ast_nodes.h"

#include <charconv>

namespace tessera::detail {
namespace {

DType dtype_named(std::string_view name) {
  if (name == "f16") return DType::f16;
  if (name == "bf16") return DType::bf16;
  if (name == "i32") return DType::i32;
  if (name == "i1") return DType::i1;
  if (name == "f8e4m3") return DType::f8e4m3;
  if (name == "f8e5m2") return DType::f8e5m2;
  return DType::f32;  // the grammar admits no other name
}

}  // namespace

DType dtype_of(const Sexp& n) {
  assert(is_expression(n.kind) || n.kind == NodeKind::loop);
  return dtype_named(n.items[kTypePosition]->atom);
}

NodeType type_of(const Sexp& n) {
  NodeType t{dtype_of(n), {}};
  for (const Sexp& d : n.items[kTypePosition + 1]->children()) t.shape.push_back(d.value);
  return t;
}

std::optional<double> padding_of(const Sexp& n) {
  assert(n.kind == NodeKind::load || n.kind == NodeKind::load_like || n.kind == NodeKind::own);
  const Sexp* pad = n.items.size() > 1 && n.items.back()->kind == NodeKind::pad ? n.items.back() : nullptr;
  if (!pad) return std::nullopt;
  return hex_double(pad->items[position(NodeKind::pad, "0xHEX")]->atom);
}

int64_t ParamNode::rank() const {
  return kind() == NodeKind::scalar ? 0 : integer(position(NodeKind::in, "RANK"));
}

llvm::SmallVector<int64_t, 4> ParamNode::tile() const {
  llvm::SmallVector<int64_t, 4> tile;
  if (kind() == NodeKind::out)
    for (const Sexp& d : item(position(NodeKind::out, "TILE_DIM")).children()) tile.push_back(d.value);
  return tile;
}

std::string CallNode::code() const {
  const std::string_view hex = code_hex();
  std::string code;
  code.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    unsigned byte = 0;
    std::from_chars(hex.data() + i, hex.data() + i + 2, byte, 16);
    code.push_back(static_cast<char>(byte));
  }
  return code;
}

}  // namespace tessera::detail

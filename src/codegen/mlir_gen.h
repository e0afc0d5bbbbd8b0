// mlir_gen.h: turns a parsed kernel AST into a tile-dialect MLIR module.
//
// The module holds one func.func marked `tile.kernel` whose arguments are, in parameter order,
// one strided memref per tensor parameter (outputs and inputs) and one scalar per scalar
// parameter. The function is verified before it is returned; a failure is a tessera::Error.
// What the kernel is specialized for (compiler/specialization.h) shows in the function's
// attributes and argument types: tile.align on 16-byte aligned tensors, a unit innermost stride
// for contiguous rows, static memref types and tile.grid for one launch's shapes, tile.whole_tiles.
#pragma once

#include <string>
#include <string_view>

#include "compiler/specialization.h"
#include "frontend/ast.h"

namespace mlir {
class MLIRContext;
class ModuleOp;
template <typename OpTy>
class OwningOpRef;
}  // namespace mlir

namespace tessera::detail {

// The symbol name used for a kernel in IR, PTX and dumps (letters, digits and '_' only).
std::string kernel_symbol(std::string_view kernel_name);

mlir::OwningOpRef<mlir::ModuleOp> generate_tile_ir(mlir::MLIRContext& ctx, std::string_view kernel_name,
                                                   const KernelAst& ast, const Specialization& spec);

}  // namespace tessera::detail

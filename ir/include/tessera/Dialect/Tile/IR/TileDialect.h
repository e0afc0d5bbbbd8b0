//===- TileDialect.h - tessera tile dialect ---------------------*- C++ -*-===//
//
// The `tile` dialect (namespace mlir::tessera::tile): its dialect class, enums
// (ReduceKind) and operations.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_TILE_IR_TILEDIALECT_H
#define TESSERA_DIALECT_TILE_IR_TILEDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tessera/Dialect/Tile/IR/TileDialect.h.inc"
#include "tessera/Dialect/Tile/IR/TileEnums.h.inc"

#define GET_OP_CLASSES
#include "tessera/Dialect/Tile/IR/TileOps.h.inc"

namespace mlir {
class DialectRegistry;
namespace tessera::tile {

/// Adds the tile dialect to `registry`.
void registerTileDialect(DialectRegistry &registry);

/// Returns true if every dimension of `type` is static and a power of two.
bool isTileShape(ShapedType type);

/// Returns true for the 8-bit float types tiles hold (f8E4M3FN, f8E5M2): data
/// only, and the one pair of types tile.mma takes mixed.
bool isFloat8(Type type);

/// The value a tile.load with `padding` (null: none, zero) reads for elements
/// outside its memref, as an attribute of element type `elt`: NaN becomes the
/// quiet NaN of `elt`, other float values are rounded to nearest even.
/// Failure when the value is not one of `elt` (see tile.load).
FailureOr<TypedAttr> getPaddingValue(Type elt, FloatAttr padding);

} // namespace tessera::tile
} // namespace mlir

#endif // TESSERA_DIALECT_TILE_IR_TILEDIALECT_H

//===- TranslateToTileIR.cpp - one tile kernel as a Tile IR module --------===//
//
// The entry points of TranslateToTileIR.h: the kernel's parameter types, its
// body (Translator), then the module's sections (Encoding.h). Nothing is
// written unless the whole kernel translated.
//
//===----------------------------------------------------------------------===//

#include "tessera/Target/TileIR/TranslateToTileIR.h"

#include "Translator.h"

#include "tessera/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tileir;

LogicalResult mlir::tessera::translateToTileIR(func::FuncOp kernel,
                                               std::vector<uint8_t> &out) {
  TypeTable types;
  StringTable strings;
  ConstantTable constants;
  auto params = Translator::paramTypes(kernel, types);
  if (failed(params))
    return failure();
  Translator translator(kernel, types, constants, params->size());
  if (failed(translator.translateBody()))
    return failure();
  FunctionRecord fn;
  fn.name = strings.get(kernel.getSymName().str());
  fn.signature = types.function(*params, {});
  fn.body = translator.w().body();
  out = assembleModule({fn}, types, strings, constants);
  return success();
}

LogicalResult mlir::tessera::translateToTileIR(ModuleOp module,
                                               std::vector<uint8_t> &out) {
  func::FuncOp kernel;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr(tile::TileDialect::getKernelAttrName()) && !fn.isExternal()) {
      if (kernel)
        return fn.emitError() << "tileir: the module has more than one tile "
                                 "kernel; the Tile IR writer takes one";
      kernel = fn;
    }
  if (!kernel)
    return module.emitError() << "tileir: the module has no func.func marked "
                              << tile::TileDialect::getKernelAttrName();
  return translateToTileIR(kernel, out);
}

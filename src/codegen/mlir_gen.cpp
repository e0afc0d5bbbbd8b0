// mlir_gen.cpp: AST -> tile dialect. One MlirGen class with one emit function per node kind.
//
// Every AST expression carries its result type, so emission is a direct walk: rank-0 expressions
// become scalars, the rest become static tensors (tile values). A node of the AST's DAG (identical
// subtrees are one node, frontend/ast.h) is emitted once per region scope (all expressions are
// pure), which also keeps a loop that is read through several (result ...) nodes a single scf.for:
// its value is reused in that scope and the loop bodies inside it; a node first met inside a loop
// body is emitted again where it is met after the loop (its value there would not dominate), and
// again in another loop body at that depth (its (iv ...) and (carried ...) then name that loop).
// Loads of "own" tiles and stores use the program ids. Nodes are read through the views of
// frontend/ast_nodes.h: the parser has checked their form and the parameters they name, so what is
// checked here is what the grammar cannot say (types, loops, results).
#include "codegen/mlir_gen.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "frontend/ast_nodes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallBitVector.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace tile = mlir::tessera::tile;
using mlir::Type;
using mlir::Value;

std::string kernel_symbol(std::string_view kernel_name) {
  std::string s = "tessera_";
  for (char c : kernel_name) s += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return s;
}

namespace {

class MlirGen {
 public:
  MlirGen(mlir::MLIRContext& ctx, std::string_view kernel, const KernelAst& ast, const Specialization& spec)
      : ctx_(ctx),
        b_(&ctx),
        loc_(mlir::NameLoc::get(b_.getStringAttr(kernel))),
        kernel_(kernel),
        ast_(ast),
        spec_(spec) {}

  mlir::OwningOpRef<mlir::ModuleOp> run() {
    check_static_shapes();
    mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc_);
    b_.setInsertionPointToEnd(module->getBody());
    llvm::SmallVector<Type> arg_types;
    for (std::size_t i = 0; i < ast_.params.size(); ++i) arg_types.push_back(param_type(ast_.params[i], i));
    auto fn = mlir::func::FuncOp::create(b_, loc_, kernel_symbol(kernel_), b_.getFunctionType(arg_types, {}));
    fn->setAttr("tile.kernel", b_.getUnitAttr());
    if (spec_.shapes)
      fn->setAttr(tile::TileDialect::getGridAttrName(), b_.getDenseI64ArrayAttr(spec_.shapes->grid));
    if (spec_.whole_tiles) fn->setAttr(tile::TileDialect::getWholeTilesAttrName(), b_.getUnitAttr());
    // Tensors whose base and row (or column) strides are 16-byte aligned say so, for vector
    // accesses and TMA.
    for (std::size_t i = 0; i < ast_.params.size(); ++i)
      if (spec_.layout(i) == ArgLayout::aligned || spec_.layout(i) == ArgLayout::aligned_columns)
        fn.setArgAttr(static_cast<unsigned>(i), "tile.align", b_.getI64IntegerAttr(16));
    // Frozen inputs: no kernel still running writes them (tile-stream-loads may copy their first
    // tiles before the wait for the grids the kernel depends on).
    for (std::size_t i = 0; i < ast_.params.size(); ++i)
      if (spec_.frozen_input(i))
        fn.setArgAttr(static_cast<unsigned>(i), tile::TileDialect::getSettledAttrName(), b_.getUnitAttr());
    mlir::Block* entry = fn.addEntryBlock();
    b_.setInsertionPointToStart(entry);
    args_.assign(entry->args_begin(), entry->args_end());
    scopes_.emplace_back();
    for (const Sexp& stmt : BodyNode(*ast_.body).statements()) emit_stmt(stmt);
    mlir::func::ReturnOp::create(b_, loc_);
    if (mlir::failed(mlir::verify(*module)))
      fail("the generated tile IR does not verify (a front-end bug; run with TESSERA_DUMP_DIR to see it)");
    return module;
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw Error(fmt::format("tessera: kernel '{}': {}", kernel_, what));
  }

  Type elem_type(DType d) {
    switch (d) {
      case DType::f32: return b_.getF32Type();
      case DType::f16: return b_.getF16Type();
      case DType::bf16: return b_.getBF16Type();
      case DType::i32: return b_.getI32Type();
      case DType::i1: return b_.getI1Type();
      case DType::f8e4m3: return b_.getType<mlir::Float8E4M3FNType>();
      case DType::f8e5m2: return b_.getType<mlir::Float8E5M2Type>();
    }
    fail("unknown dtype");
  }
  // Static shapes name one tensor of the parameter's rank per tensor parameter (a launch with
  // other arguments than the kernel's parameters, which check_args refuses, may get here first).
  void check_static_shapes() const {
    if (!spec_.shapes) return;
    const auto& tensors = spec_.shapes->tensors;
    if (tensors.size() != ast_.params.size())
      fail(fmt::format("compiled for the static shapes of {} arguments; the kernel has {} parameters", tensors.size(),
                       ast_.params.size()));
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const ParamInfo& p = ast_.params[i];
      const int64_t rank = p.kind == ParamInfo::Kind::scalar ? 0 : p.rank;
      if (std::ssize(tensors[i].sizes) != rank || tensors[i].strides.size() != tensors[i].sizes.size())
        fail(fmt::format("compiled for static shapes whose argument {} does not have parameter {}'s rank {}", i, i,
                         rank));
    }
  }
  // A strided memref; contiguous rows (aligned or not) get a static innermost stride of 1, aligned
  // columns a static outer stride of 1. A kernel compiled for static shapes has static sizes,
  // strides and offset.
  Type param_type(const ParamInfo& p, std::size_t i) {
    Type e = elem_type(p.dtype);
    if (p.kind == ParamInfo::Kind::scalar) return e;
    if (spec_.shapes) {
      const StaticTensor& t = spec_.shapes->tensors[i];
      auto strided = mlir::StridedLayoutAttr::get(&ctx_, t.offset, t.strides);
      return mlir::MemRefType::get(t.sizes, e, strided);
    }
    llvm::SmallVector<int64_t> dyn(p.rank, mlir::ShapedType::kDynamic);
    llvm::SmallVector<int64_t> strides = dyn;
    if (spec_.layout(i) == ArgLayout::aligned || spec_.layout(i) == ArgLayout::contiguous) strides.back() = 1;
    if (spec_.layout(i) == ArgLayout::aligned_columns) strides.front() = 1;
    auto strided = mlir::StridedLayoutAttr::get(&ctx_, mlir::ShapedType::kDynamic, strides);
    return mlir::MemRefType::get(dyn, e, strided);
  }
  // The scalar or tensor type of an expression's TYPE.
  Type node_type(const Sexp& n) {
    const NodeType t = type_of(n);
    Type e = elem_type(t.dtype);
    if (t.shape.empty()) return e;
    return mlir::RankedTensorType::get(t.shape, e);
  }
  // `v`'s type must be `want` (the AST's type of the operand): MLIR's builders assume operands of
  // matching types.
  Value expect(Value v, Type want, const Sexp& n) {
    if (v.getType() != want) fail(fmt::format("malformed AST: an operand of '{}' has the wrong type", n.text.substr(0, 80)));
    return v;
  }
  // The i1 type of `ty`'s shape.
  Type bool_like(Type ty) {
    if (auto tt = mlir::dyn_cast<mlir::RankedTensorType>(ty)) return tt.clone(b_.getI1Type());
    return b_.getI1Type();
  }
  Value program_ids_value(int d) {
    return tile::ProgramIdOp::create(b_, loc_, b_.getI32Type(), static_cast<uint32_t>(d));
  }
  llvm::SmallVector<Value> own_indices(int rank) {
    llvm::SmallVector<Value> idx;
    for (int d = 0; d < rank; ++d) idx.push_back(program_ids_value(d));
    return idx;
  }

  void emit_stmt(const Sexp& s) {
    const StoreNode store(s);
    const int p = store.output();
    const ParamInfo& out = ast_.params[p];
    Value v = emit(store.value());
    if (v.getType() != own_tile_type(out, out.dtype))
      fail(fmt::format("malformed AST: '{}' stores a value whose type is not output {}'s tile", s.text.substr(0, 80), p));
    tile::StoreOp::create(b_, loc_, v, args_[p], own_indices(out.rank));
    // A statement sees the stores before it (docs/ast-format.md): values that read output p's own
    // tile are read again where a later statement uses them.
    llvm::SmallVector<const Sexp*> stale;
    for (const auto& [node, value] : scopes_.back())
      if (owns_read(*node).test(static_cast<unsigned>(p))) stale.push_back(node);
    for (const Sexp* node : stale) scopes_.back().erase(node);
  }
  // The outputs whose own tile `n` reads: the (own ... Q) in its subtree (memoized per node).
  const llvm::SmallBitVector& owns_read(const Sexp& n) {
    if (auto it = owns_read_.find(&n); it != owns_read_.end()) return it->second;
    llvm::SmallBitVector owns(ast_.params.size());
    if (n.kind == NodeKind::own) owns.set(static_cast<unsigned>(OwnNode(n).output()));
    for (const Sexp& c : n.children())
      if (c.is_list) owns |= owns_read(c);
    return owns_read_[&n] = std::move(owns);
  }
  // The type of output `out`'s own tile with elements of dtype d. Accesses at the program's own
  // tile index (store, own, load_like) must have it: the launcher's grid and its whole-tiles check
  // (whole_tiles.h) assume the declared tile; a larger one would reach past the tensor unmasked.
  Type own_tile_type(const ParamInfo& out, DType d) {
    return mlir::RankedTensorType::get(llvm::SmallVector<int64_t>(out.tile.begin(), out.tile.end()), elem_type(d));
  }

  Value lookup(const Sexp& n) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto f = it->find(&n); f != it->end()) return f->second;
    return {};
  }

  // Every node's value has the type the node carries (docs/ast-format.md); the checks before
  // the builders and this one keep malformed trees from reaching MLIR's builders and the lowering.
  Value emit(const Sexp& n) {
    if (Value v = lookup(n)) return v;
    Value v = emit_uncached(n);
    if (v.getType() != node_type(n))
      fail(fmt::format("malformed AST: '{}' does not have the type it names", n.text.substr(0, 80)));
    scopes_.back()[&n] = v;
    return v;
  }

  static bool is_float(Type t) { return mlir::isa<mlir::FloatType>(mlir::getElementTypeOrSelf(t)); }
  static std::string dtype_name_of(Type t) {
    std::string text;
    llvm::raw_string_ostream os(text);
    t.print(os);
    return text;
  }
  static bool is_float8(Type t) { return tile::isFloat8(mlir::getElementTypeOrSelf(t)); }
  // 8-bit float tiles hold data (dtype.h): the front end rejects arithmetic on them; a tree that
  // has it anyway stops here, before the lowering, which has no arithmetic of theirs.
  Value data_only(Value x, const Sexp& n) {
    if (is_float8(x.getType()))
      fail(fmt::format("malformed AST: '{}' computes on an 8-bit float tile (cast it to f32 first)",
                       n.text.substr(0, 80)));
    return x;
  }

  Value emit_uncached(const Sexp& n) {
    Type ty = node_type(n);
    switch (n.kind) {
      case NodeKind::load: {
        const LoadNode load(n);
        llvm::SmallVector<Value> idx;
        for (const Sexp& i : load.indices()) idx.push_back(emit(i));
        return emit_load(load.padding(), ty, args_[load.input()], idx);
      }
      case NodeKind::load_like: {
        const LoadLikeNode like(n);
        const ParamInfo& in = ast_.params[like.input()];
        const ParamInfo& out = ast_.params[like.output()];
        if (ty != own_tile_type(out, in.dtype))
          fail(fmt::format("malformed AST: '{}' is not output {}'s tile", n.text.substr(0, 80), like.output()));
        return emit_load(like.padding(), ty, args_[like.input()], own_indices(out.rank));
      }
      case NodeKind::own: {
        const OwnNode own(n);
        const ParamInfo& out = ast_.params[own.output()];
        if (ty != own_tile_type(out, out.dtype))
          fail(fmt::format("malformed AST: '{}' is not output {}'s tile", n.text.substr(0, 80), own.output()));
        return emit_load(own.padding(), ty, args_[own.output()], own_indices(out.rank));
      }
      case NodeKind::arg: return expect(args_[ArgNode(n).param()], ty, n);
      case NodeKind::dim: {
        const DimNode dim(n);
        Value d = mlir::memref::DimOp::create(b_, loc_, args_[dim.param()], dim.axis());
        return mlir::arith::IndexCastOp::create(b_, loc_, b_.getI32Type(), d);
      }
      case NodeKind::program_id: return program_ids_value(static_cast<int>(ProgramIdNode(n).axis()));
      case NodeKind::num_programs:
        return tile::NumProgramsOp::create(b_, loc_, b_.getI32Type(), static_cast<uint32_t>(NumProgramsNode(n).axis()));
      case NodeKind::constant: return emit_const(ty, ConstNode(n).value());
      case NodeKind::iota: return tile::IotaOp::create(b_, loc_, ty);
      case NodeKind::cast: {
        Value x = emit(CastNode(n).operand());
        auto shape_of = [](Type t) {
          auto tt = mlir::dyn_cast<mlir::RankedTensorType>(t);
          return tt ? llvm::SmallVector<int64_t>(tt.getShape()) : llvm::SmallVector<int64_t>{-1};
        };
        if (shape_of(x.getType()) != shape_of(ty))
          fail(fmt::format("malformed AST: a cast changes the shape in '{}'", n.text.substr(0, 80)));
        return emit_cast(ty, x);
      }
      case NodeKind::broadcast: return emit_broadcast(ty, emit(BroadcastNode(n).operand()));
      case NodeKind::reshape: return tile::ReshapeOp::create(b_, loc_, ty, emit(ReshapeNode(n).operand()));
      case NodeKind::transpose: return tile::TransposeOp::create(b_, loc_, ty, emit(TransposeNode(n).operand()));
      case NodeKind::reduce: {
        const ReduceNode reduce(n);
        return emit_reduce(ty, reduce.reduction(), reduce.axis(), data_only(emit(reduce.operand()), n));
      }
      case NodeKind::mma: {
        const MmaNode mma(n);
        return tile::MmaOp::create(b_, loc_, ty, emit(mma.a()), emit(mma.b()), emit(mma.accumulator()));
      }
      case NodeKind::call: {
        // The code is linked in by the GPU pipeline.
        const CallNode call(n);
        llvm::SmallVector<Value> call_args;
        for (const Sexp& a : call.args()) call_args.push_back(emit(a));
        return tile::DeviceCallOp::create(b_, loc_, ty, mlir::FlatSymbolRefAttr::get(&ctx_, call.name()), call_args);
      }
      case NodeKind::select: {
        // Operands of several-operand nodes are emitted last to first, the order in which the front
        // end has always emitted them: it fixes the order of the ops, and so the generated code.
        const SelectNode select(n);
        Value y = expect(emit(select.if_false()), ty, n);
        Value x = expect(emit(select.if_true()), ty, n);
        Value c = expect(emit(select.condition()), bool_like(ty), n);
        return mlir::arith::SelectOp::create(b_, loc_, c, x, y);
      }
      case NodeKind::loop: return emit_for(n);
      case NodeKind::result: {
        const ResultNode result(n);
        Value loop_first = emit(result.loop());  // the loop's result 0 (memoized loop)
        auto loop = mlir::dyn_cast_or_null<mlir::scf::ForOp>(loop_first.getDefiningOp());
        if (!loop) fail("malformed AST: a loop result of something other than a loop");
        const int64_t k = result.index();
        if (k < 0 || k >= static_cast<int64_t>(loop.getNumResults())) fail("malformed AST: bad loop result index");
        return loop.getResult(k);
      }
      case NodeKind::iv:
      case NodeKind::carried: {
        const int64_t id = n.kind == NodeKind::iv ? IvNode(n).loop() : CarriedNode(n).loop();
        if (id < 0 || id >= static_cast<int64_t>(loops_.size())) fail("malformed AST: loop variable outside its loop");
        mlir::scf::ForOp loop = loops_[id];
        if (n.kind == NodeKind::iv) return loop_ivs_[id];
        const int64_t k = CarriedNode(n).index();
        if (k < 0 || k >= static_cast<int64_t>(loop.getRegionIterArgs().size())) fail("malformed AST: bad carried index");
        return loop.getRegionIterArgs()[k];
      }
      case NodeKind::unary: {
        const UnaryNode unary(n);
        return emit_unary(unary.op(), ty, data_only(expect(emit(unary.operand()), ty, n), n));
      }
      case NodeKind::binary:
      case NodeKind::compare: {
        const BinaryNode binary(n);
        Value y = data_only(emit(binary.rhs()), n);  // last to first, as for select
        Value x = expect(emit(binary.lhs()), y.getType(), n);
        // Comparisons give i1 of the operands' shape; the other ops the operands' type.
        if ((n.kind == NodeKind::compare ? bool_like(x.getType()) : x.getType()) != ty)
          fail(fmt::format("malformed AST: '{}' has the wrong result type", n.text.substr(0, 80)));
        return emit_binary(binary.op(), ty, x, y);
      }
      default: fail(fmt::format("malformed AST: '{}' is not an expression", n.text.substr(0, 80)));
    }
  }

  // The tile.load of a load node, with its padding value if it has one (else zero, the default).
  Value emit_load(std::optional<double> pad, Type ty, Value source, llvm::ArrayRef<Value> indices) {
    return tile::LoadOp::create(b_, loc_, ty, source, indices, pad ? b_.getF64FloatAttr(*pad) : mlir::FloatAttr());
  }

  Value emit_const(Type ty, double v) {
    Type e = mlir::getElementTypeOrSelf(ty);
    mlir::TypedAttr scalar;
    if (auto ft = mlir::dyn_cast<mlir::FloatType>(e)) {
      // An 8-bit float constant lies within the type's finite range (or is NaN, or an E5M2
      // infinity), as the front end requires: these types saturate, IEEE rounding does not.
      if (ft.getWidth() == 8 && !std::isnan(v)) {
        const llvm::fltSemantics& sem = ft.getFloatSemantics();
        const double largest = llvm::APFloat::getLargest(sem).convertToDouble();
        if (std::isinf(v) ? !llvm::APFloat::semanticsHasInf(sem) : std::abs(v) > largest)
          fail(fmt::format("malformed AST: the {} constant {} is out of range", dtype_name_of(ft), v));
      }
      scalar = b_.getFloatAttr(ft, v);
    } else if (e.isInteger(1)) {
      scalar = b_.getIntegerAttr(e, v != 0.0 ? 1 : 0);
    } else {
      if (!(v >= -2147483648.0 && v <= 2147483647.0))
        fail(fmt::format("malformed AST: the i32 constant {} is out of range", v));
      scalar = b_.getIntegerAttr(e, static_cast<int64_t>(v));
    }
    if (auto tt = mlir::dyn_cast<mlir::RankedTensorType>(ty))
      return mlir::arith::ConstantOp::create(b_, loc_, mlir::DenseElementsAttr::get(tt, scalar));
    return mlir::arith::ConstantOp::create(b_, loc_, scalar);
  }

  Value emit_cast(Type to, Value x) {
    Type from_e = mlir::getElementTypeOrSelf(x.getType());
    Type to_e = mlir::getElementTypeOrSelf(to);
    if (from_e == to_e) return x;
    auto same_shape = [&](Type e) -> Type {
      if (auto tt = mlir::dyn_cast<mlir::RankedTensorType>(to)) return tt.clone(e);
      return e;
    };
    // A conversion from or to an 8-bit float goes through f32, which holds every 8-bit float
    // exactly: a 16-bit float or an integer is rounded once, to the 8-bit float
    // (tile-expand-f8-conversions expands the f32 steps). To f16 it is one exact widening, which
    // the pass expands without f32.
    const bool f8_to_f16 = is_float8(from_e) && to_e.isF16();
    if (!f8_to_f16 && ((is_float8(from_e) && !to_e.isF32()) || (is_float8(to_e) && !from_e.isF32())))
      return emit_cast(to, emit_cast(same_shape(b_.getF32Type()), x));
    bool ff = mlir::isa<mlir::FloatType>(from_e), tf = mlir::isa<mlir::FloatType>(to_e);
    if (to_e.isInteger(1)) {  // x != 0
      Value zero = emit_zero(x.getType());
      if (ff) return mlir::arith::CmpFOp::create(b_, loc_, mlir::arith::CmpFPredicate::UNE, x, zero);
      return mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::ne, x, zero);
    }
    if (ff && tf) {
      unsigned fw = from_e.getIntOrFloatBitWidth(), tw = to_e.getIntOrFloatBitWidth();
      if (fw == tw) {  // f16 <-> bf16 through f32
        Value wide = mlir::arith::ExtFOp::create(b_, loc_, same_shape(b_.getF32Type()), x);
        return mlir::arith::TruncFOp::create(b_, loc_, to, wide);
      }
      if (fw < tw) return mlir::arith::ExtFOp::create(b_, loc_, to, x);
      return mlir::arith::TruncFOp::create(b_, loc_, to, x);
    }
    if (!ff && tf) {
      if (from_e.isInteger(1)) return mlir::arith::UIToFPOp::create(b_, loc_, to, x);
      return mlir::arith::SIToFPOp::create(b_, loc_, to, x);
    }
    if (ff && !tf) return mlir::arith::FPToSIOp::create(b_, loc_, to, x);
    // int -> int: only i1 -> i32 here.
    return mlir::arith::ExtUIOp::create(b_, loc_, to, x);
  }

  Value emit_zero(Type ty) {
    Type e = mlir::getElementTypeOrSelf(ty);
    mlir::TypedAttr z = mlir::isa<mlir::FloatType>(e) ? mlir::TypedAttr(b_.getFloatAttr(e, 0.0))
                                                       : mlir::TypedAttr(b_.getIntegerAttr(e, 0));
    if (auto tt = mlir::dyn_cast<mlir::RankedTensorType>(ty))
      return mlir::arith::ConstantOp::create(b_, loc_, mlir::DenseElementsAttr::get(tt, z));
    return mlir::arith::ConstantOp::create(b_, loc_, z);
  }

  Value emit_broadcast(Type ty, Value x) {
    auto rt = mlir::dyn_cast<mlir::RankedTensorType>(ty);
    if (!rt) return x;  // rank 0 to rank 0
    auto xt = mlir::dyn_cast<mlir::RankedTensorType>(x.getType());
    if (!xt) return tile::SplatOp::create(b_, loc_, ty, x);
    if (xt.getShape() == rt.getShape()) return x;
    if (xt.getRank() < rt.getRank()) {  // align trailing dims: prepend ones
      llvm::SmallVector<int64_t> shape(rt.getRank() - xt.getRank(), 1);
      shape.append(xt.getShape().begin(), xt.getShape().end());
      x = tile::ReshapeOp::create(b_, loc_, xt.clone(shape), x);
    }
    return tile::BroadcastOp::create(b_, loc_, ty, x);
  }

  Value emit_reduce(Type ty, std::string_view kind, int64_t axis, Value x) {
    tile::ReduceKind k;
    if (kind == "sum") k = tile::ReduceKind::sum;
    else if (kind == "max") k = tile::ReduceKind::max;
    else if (kind == "min") k = tile::ReduceKind::min;
    else fail(fmt::format("malformed AST: unknown reduction '{}'", kind));
    return tile::ReduceOp::create(b_, loc_, ty, x, k, static_cast<uint32_t>(axis));
  }

  // (for TYPE ID N (INIT*) (YIELD*)): as many yields as inits, at least one (the grammar's rule).
  Value emit_for(const Sexp& n) {
    const LoopNode for_node(n);
    if (for_node.depth() != static_cast<int64_t>(loops_.size()))
      fail("malformed AST: loop id does not match its nesting depth");
    Value count = emit(for_node.trip_count());
    llvm::SmallVector<Value> inits;
    for (const Sexp& i : for_node.inits()) inits.push_back(emit(i));
    Value lb = mlir::arith::ConstantIndexOp::create(b_, loc_, 0);
    Value ub = mlir::arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), count);
    Value step = mlir::arith::ConstantIndexOp::create(b_, loc_, 1);
    auto loop = mlir::scf::ForOp::create(b_, loc_, lb, ub, step, inits);
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(loop.getBody());
    loops_.push_back(loop);
    loop_ivs_.push_back(mlir::arith::IndexCastOp::create(b_, loc_, b_.getI32Type(), loop.getInductionVar()));
    scopes_.emplace_back();
    llvm::SmallVector<Value> yields;
    for (const Sexp& y : for_node.yields()) yields.push_back(emit(y));
    // scf.for built with inits already has an implicit yield only when there are no iter_args.
    if (!loop.getBody()->empty() && mlir::isa<mlir::scf::YieldOp>(loop.getBody()->back()))
      loop.getBody()->back().erase();
    mlir::scf::YieldOp::create(b_, loc_, yields);
    scopes_.pop_back();
    loops_.pop_back();
    loop_ivs_.pop_back();
    return loop.getResult(0);
  }

  // Integer division that never traps: padded lanes of ragged tiles divide by zero, and the CPU
  // target would fault. x / 0 yields x (an unspecified value) and INT_MIN / -1 wraps to INT_MIN.
  Value emit_safe_divsi(Value x, Value y) {
    using namespace mlir::arith;
    Type ty = y.getType();
    auto splat = [&](int64_t v) -> Value {
      mlir::TypedAttr a = b_.getIntegerAttr(mlir::getElementTypeOrSelf(ty), v);
      if (auto tt = mlir::dyn_cast<mlir::RankedTensorType>(ty))
        return ConstantOp::create(b_, loc_, mlir::DenseElementsAttr::get(tt, a));
      return ConstantOp::create(b_, loc_, a);
    };
    unsigned bits = mlir::getElementTypeOrSelf(ty).getIntOrFloatBitWidth();
    Value zero_div = CmpIOp::create(b_, loc_, CmpIPredicate::eq, y, splat(0));
    Value overflow = AndIOp::create(b_, loc_, CmpIOp::create(b_, loc_, CmpIPredicate::eq, y, splat(-1)),
                                    CmpIOp::create(b_, loc_, CmpIPredicate::eq, x,
                                                   splat(llvm::APInt::getSignedMinValue(bits).getSExtValue())));
    Value bad = OrIOp::create(b_, loc_, zero_div, overflow);
    Value safe = SelectOp::create(b_, loc_, bad, splat(1), y);
    return DivSIOp::create(b_, loc_, x, safe);
  }

  Value emit_unary(std::string_view op, Type ty, Value x) {
    bool f = is_float(ty);
    if (op == "neg") {
      if (f) return mlir::arith::NegFOp::create(b_, loc_, x);
      return mlir::arith::SubIOp::create(b_, loc_, emit_zero(ty), x);
    }
    if (op == "not") {
      mlir::TypedAttr one = b_.getIntegerAttr(b_.getI1Type(), 1);
      Value ones = mlir::isa<mlir::RankedTensorType>(ty)
                       ? Value(mlir::arith::ConstantOp::create(
                             b_, loc_, mlir::DenseElementsAttr::get(mlir::cast<mlir::RankedTensorType>(ty), one)))
                       : Value(mlir::arith::ConstantOp::create(b_, loc_, one));
      return mlir::arith::XOrIOp::create(b_, loc_, x, ones);
    }
    if (op == "abs") {
      if (f) return mlir::math::AbsFOp::create(b_, loc_, x);
      return mlir::math::AbsIOp::create(b_, loc_, x);
    }
    if (!f) fail(fmt::format("'{}' needs a floating-point tile", op));
    if (op == "exp") return mlir::math::ExpOp::create(b_, loc_, x);
    if (op == "exp2") return mlir::math::Exp2Op::create(b_, loc_, x);
    if (op == "log") return mlir::math::LogOp::create(b_, loc_, x);
    if (op == "sqrt") return mlir::math::SqrtOp::create(b_, loc_, x);
    if (op == "rsqrt") return mlir::math::RsqrtOp::create(b_, loc_, x);
    if (op == "tanh") return mlir::math::TanhOp::create(b_, loc_, x);
    // The approximate functions: the same ops marked `afn` (convert-math-to-nvvm picks the fast forms).
    auto afn = mlir::arith::FastMathFlagsAttr::get(&ctx_, mlir::arith::FastMathFlags::afn);
    if (op == "fast_exp") return mlir::math::ExpOp::create(b_, loc_, x, afn);
    if (op == "fast_sqrt") return mlir::math::SqrtOp::create(b_, loc_, x, afn);
    if (op == "fast_tanh") return mlir::math::TanhOp::create(b_, loc_, x, afn);
    fail(fmt::format("malformed AST: unknown unary op '{}'", op));
  }

  Value emit_binary(std::string_view op, Type ty, Value x, Value y) {
    bool f = is_float(x.getType());
    using namespace mlir::arith;
    if (op == "add") return f ? Value(AddFOp::create(b_, loc_, x, y)) : Value(AddIOp::create(b_, loc_, x, y));
    if (op == "sub") return f ? Value(SubFOp::create(b_, loc_, x, y)) : Value(SubIOp::create(b_, loc_, x, y));
    if (op == "mul") return f ? Value(MulFOp::create(b_, loc_, x, y)) : Value(MulIOp::create(b_, loc_, x, y));
    if (op == "div") return f ? Value(DivFOp::create(b_, loc_, x, y)) : emit_safe_divsi(x, y);
    if (op == "fast_div") {
      if (!f) fail("'fast_div' needs floating-point tiles");
      return DivFOp::create(b_, loc_, x, y, FastMathFlagsAttr::get(&ctx_, FastMathFlags::afn));
    }
    if (op == "max") return f ? Value(MaximumFOp::create(b_, loc_, x, y)) : Value(MaxSIOp::create(b_, loc_, x, y));
    if (op == "min") return f ? Value(MinimumFOp::create(b_, loc_, x, y)) : Value(MinSIOp::create(b_, loc_, x, y));
    if (op == "and") return AndIOp::create(b_, loc_, x, y);
    if (op == "or") return OrIOp::create(b_, loc_, x, y);
    // i32 compares signed; i1 unsigned, as C++ compares bools (false < true; signed, true is -1).
    struct Predicates {
      CmpFPredicate f;
      CmpIPredicate i32, i1;
    };
    static const std::pair<std::string_view, Predicates> cmps[] = {
        {"eq", {CmpFPredicate::OEQ, CmpIPredicate::eq, CmpIPredicate::eq}},
        {"ne", {CmpFPredicate::UNE, CmpIPredicate::ne, CmpIPredicate::ne}},
        {"lt", {CmpFPredicate::OLT, CmpIPredicate::slt, CmpIPredicate::ult}},
        {"le", {CmpFPredicate::OLE, CmpIPredicate::sle, CmpIPredicate::ule}},
        {"gt", {CmpFPredicate::OGT, CmpIPredicate::sgt, CmpIPredicate::ugt}},
        {"ge", {CmpFPredicate::OGE, CmpIPredicate::sge, CmpIPredicate::uge}}};
    for (const auto& [name, preds] : cmps) {
      if (op != name) continue;
      if (f) return CmpFOp::create(b_, loc_, preds.f, x, y);
      const bool boolean = mlir::getElementTypeOrSelf(x.getType()).isInteger(1);
      return CmpIOp::create(b_, loc_, boolean ? preds.i1 : preds.i32, x, y);
    }
    (void)ty;
    fail(fmt::format("malformed AST: unknown binary op '{}'", op));
  }

  mlir::MLIRContext& ctx_;
  mlir::OpBuilder b_;
  mlir::Location loc_;
  std::string_view kernel_;
  const KernelAst& ast_;
  const Specialization& spec_;
  llvm::SmallVector<Value> args_;
  std::vector<llvm::DenseMap<const Sexp*, Value>> scopes_;
  llvm::DenseMap<const Sexp*, llvm::SmallBitVector> owns_read_;  // owns_read's memo
  llvm::SmallVector<mlir::scf::ForOp> loops_;
  llvm::SmallVector<Value> loop_ivs_;
};

}  // namespace

mlir::OwningOpRef<mlir::ModuleOp> generate_tile_ir(mlir::MLIRContext& ctx, std::string_view kernel_name,
                                                   const KernelAst& ast, const Specialization& spec) {
  return MlirGen(ctx, kernel_name, ast, spec).run();
}

}  // namespace tessera::detail

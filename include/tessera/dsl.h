// tessera/dsl.h: the tile-kernel DSL, in one include (the umbrella of the front end).
//
// Includes every expression header and kernel_ast.h, and re-exports the user functions that take
// a node or placeholder argument into tessera::detail, where those types live, so that argument-
// dependent lookup finds them: inside a kernel lambda `exp(t - max<1>(t))` or
// `for_range(n, body, init)` works without `tessera::` qualification, as do the operators. The
// functions without arguments (program_id, num_programs, iota) and c<V> need `tessera::` or a
// using-directive. Standard library only.
//
//   tessera::DType, half, bfloat16, dtype_v<T>, host_type_t<D>       dtype.h
//   tessera::Shape<Dims...>, broadcast_t, reduce_t, transpose_t        shape.h
//   c<V>, inf, quiet_nan, full, iota, program_id, num_programs, dim,   expr_base.h, index_expr.h,
//   load, seq, x.load_like(out).padded(c<V>)                           load_store_expr.h
//   exp exp2 log sqrt rsqrt tanh abs cast, unary - !                   expr/unary_expr.h
//   fast_exp fast_sqrt fast_tanh (approximate on the GPU)              expr/unary_expr.h
//   + - * / && || == != < <= > >=, maximum minimum select fast_div     expr/binary_expr.h
//   sigmoid silu gelu_tanh (activations built from exp and fast_div)    expr/activation.h
//   sum max min (keepdim reductions)                                   expr/reduce_expr.h
//   reshape broadcast_to transpose                                     expr/shape_expr.h
//   mma                                                                expr/mma_expr.h
//   for_range carry get                                                expr/loop_expr.h
//   cuda_function ptx_function (device functions called elementwise)   expr/call_expr.h
//   detail::kernel_ast<Fn, Params...>::view()                          kernel_ast.h
#pragma once

#include "tessera/dtype.h"
#include "tessera/shape.h"
#include "tessera/expr/fixed_string.h"
#include "tessera/expr/expr_base.h"
#include "tessera/expr/shape_expr.h"
#include "tessera/expr/index_expr.h"
#include "tessera/expr/load_store_expr.h"
#include "tessera/expr/unary_expr.h"
#include "tessera/expr/binary_expr.h"
#include "tessera/expr/activation.h"
#include "tessera/expr/reduce_expr.h"
#include "tessera/expr/mma_expr.h"
#include "tessera/expr/loop_expr.h"
#include "tessera/expr/call_expr.h"
#include "tessera/kernel_ast.h"

namespace tessera::detail {
using tessera::abs;
using tessera::broadcast_to;
using tessera::carry;
using tessera::cast;
using tessera::dim;
using tessera::exp;
using tessera::exp2;
using tessera::fast_div;
using tessera::fast_exp;
using tessera::fast_sqrt;
using tessera::fast_tanh;
using tessera::for_range;
using tessera::full;
using tessera::gelu_tanh;
using tessera::get;
using tessera::load;
using tessera::log;
using tessera::max;
using tessera::maximum;
using tessera::min;
using tessera::minimum;
using tessera::mma;
using tessera::reshape;
using tessera::rsqrt;
using tessera::select;
using tessera::seq;
using tessera::sigmoid;
using tessera::silu;
using tessera::sqrt;
using tessera::sum;
using tessera::tanh;
using tessera::transpose;
}  // namespace tessera::detail

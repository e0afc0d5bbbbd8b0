// tessera.h: the one header users include.
//
// defines:
//   tessera/dsl.h      the tile language: placeholders, tile expressions, loops, kernel_ast
//   tessera/dtype.h    DType, half, bfloat16
//   tessera/tensor.h   Tensor<T, Rank>, Partition<T, Rank, Tile...>
//   tessera/kernel.h   kernel(), Kernel::launch/compile, Target, cache_stats()
//   tessera/errors.h   tessera::Error
#pragma once

#include "tessera/dsl.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"
#include "tessera/kernel.h"
#include "tessera/tensor.h"

// tessera.h: the one header users include.
//
// defines:
//   tessera/dsl.h      the tile language: placeholders, tile expressions, loops, kernel_ast
//   tessera/dtype.h    DType, half, bfloat16
//   tessera/tensor.h   Tensor<T, Rank> (from_device), Partition / OwnedPartition<T, Rank, Tile...>
//   tessera/kernel.h   kernel(), Kernel::launch/launch_async/compile, cache_stats()
//   tessera/launch.h   Target, Stream, Event, LaunchOptions, LaunchHandle, Scalar,
//                      set_strict_host_access(), synchronize()
//   tessera/autotune.h autotune(), tile_option(): launches that time their options once per problem
//   tessera/graph.h    Graph: capture, replay, rebind
//   tessera/unsafe.h   unsafe::cuda_kernel / ptx_kernel, unsafe_cuda_kernel, unsafe::out/in/device_ptr
//   tessera/interop.h  borrow_for_device / borrow_for_host, Access, ForeignBorrow
//   tessera/errors.h   tessera::Error
#pragma once

#include "tessera/autotune.h"
#include "tessera/dsl.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"
#include "tessera/graph.h"
#include "tessera/interop.h"
#include "tessera/kernel.h"
#include "tessera/launch.h"
#include "tessera/tensor.h"
#include "tessera/unsafe.h"

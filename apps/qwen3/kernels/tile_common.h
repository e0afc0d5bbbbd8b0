// tile_common.h: what every tile kernel of the Qwen3 engine shares.
//
// The kernels live in qwen3::kernels, one header per family (embedding.h, matvec.h,
// qk_norm_rope.h, attention.h, sampling.h, weight_copy.h; the prefill's prefill_*.h, whose tile
// sizes are in prefill_tiles.h). Each is a function template returning
// a tessera::Kernel whose lambda is the kernel; the template parameters are the kernel's static
// tile sizes (powers of two, as the tile language requires), and each instantiation gets its own
// name so that dumps and errors say which one ran. Only tessera's public API is used.
//
// Conventions of every kernel:
//  - weights and the KV cache are bf16; activations between kernels are f32 (a few KB per
//    token, so their precision costs no bandwidth); all arithmetic is f32 (16-bit floats are
//    storage types in tessera anyway);
//  - a tensor's rows past its edge read as zero (or the padding a load names), and stores past
//    an edge are dropped, so sizes that no tile divides need no masks except where a padded zero
//    would be wrong (a softmax, an argmax), which the kernel says.
// The dtype names below avoid `using namespace tessera`, whose DType would clash with
// qwen3::DType (safetensors.h) in code that sees both.
#pragma once

#include <tessera/tessera.h>

#include <cstdint>
#include <string>
#include <type_traits>

namespace qwen3::kernels {

inline constexpr tessera::DType kF32 = tessera::DType::f32;
inline constexpr tessera::DType kBF16 = tessera::DType::bf16;
inline constexpr tessera::DType kI32 = tessera::DType::i32;

// "name_8x256": a kernel name with its tile sizes.
template <class... Ints>
std::string tiled_name(const char* base, Ints... sizes) {
  std::string name = base;
  char sep = '_';
  ((name += sep + std::to_string(sizes), sep = 'x'), ...);
  return name;
}

// Whether n is a power of two (tile sizes must be).
constexpr bool power_of_two(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// The smallest power of two >= n (n >= 1).
constexpr std::int64_t next_power_of_two(std::int64_t n) {
  std::int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// The tile sizes the engine launches its kernels with (the tests use the same, so that they test
// the code that runs). Chosen for the GPU: a program is a CTA; a matrix-vector program streams an
// R x BK bf16 tile (16 x 512 = 16 KB) per step. Measured on the H200 (decode tokens/s of the
// synthetic 4B / 0.6B, 128 tokens): 8 x 256 124-169 / 628, 4 x 1024 115 / 657, 16 x 512 236-241 /
// 703-726, 16 x 1024 144 / 756, 32 x 256 191 / 706, 64 x 256 189 / 634: fewer, larger steps keep
// more bytes in flight per SM, until the f32 accumulator of R x BK costs the CTAs per SM.
inline constexpr int kEmbeddingTile = 1024;  // embedding_gather<BH>
inline constexpr int kMatvecRows = 16;       // matvec*<R, BK>
inline constexpr int kMatvecCols = 512;
// A model whose intermediate size is under kSmallModelIntermediate (Qwen3-0.6B: 3072) runs its
// gate/up product at 8 x 256 tiles: twice the programs of 16 x 512 (384 against 192, on the
// H200's 132 SMs), 0.385 of the copy bandwidth against 0.314 in bench_matvec.
inline constexpr int kSmallModelIntermediate = 4096;
inline constexpr int kSmallSwigluTileRows = 8;
inline constexpr int kSmallSwigluTileCols = 256;
// The decode products with fewer threads than the compiler's choice (CompilerHints::threads), so
// that each thread multiplies more weight rows by the vector chunk it loads: the products with a
// folded RMSNorm (QKV, LM head) at 16 x 512 and 256 threads (4 rows of 8 columns per thread
// instead of 2), and, from 4B up, the gate/up product with SwiGLU at 8 x 512 and 256 threads
// (twice the programs of 16 x 512). bench_matvec on the H200, ratio to the copy, 4B's shapes:
// QKV 0.527 -> 0.569, LM head 0.919 -> 0.975, gate/up 0.735 -> 0.781; the engine 4B +5%, 0.6B
// +11%, 32B +4% (docs/performance.md). o_proj and down were within 2% of the compiler's choice at
// every tile and thread count tried and keep it.
inline constexpr int kNormMatvecThreads = 256;
inline constexpr int kSwigluTileRows = 8;
inline constexpr int kSwigluTileCols = 512;
inline constexpr int kSwigluThreads = 256;
// From 4B up (intermediate size kSmallModelIntermediate or more), the products with a folded
// RMSNorm (QKV, gate/up, LM head) are compiled for three programs per SM (CompilerHints::occupancy:
// at 256 threads, at most 80 registers; their own choice was 90-126), so that the next kernel's
// programs become resident while theirs run. H200, session 44: bench_decode_layers' 4B layer 70.8
// and 69.9 us against 73.5 and 74.4 (gate/up alone 26.4-26.7 against 28.6-28.8), the engine 4B
// 369.1 and 359.0 tokens/s against 344.7 and 347.0; four per SM made 4B slower (278-281), and
// 0.6B lost 7% with three (1032-1033 against 1113), so it keeps the compiler's choice.
inline constexpr int kNormProductOccupancy = 3;
// With EngineOptions::stream_stages (bulk rings of weight tiles), o_proj and down run at 8 x 512
// and 256 threads (in the plain-CUDA measurement of benchmarks/experiments/bulk_matvec_chain.cu,
// 8-row rings streamed 4B's residual products at 0.69-0.99 of its copy against 0.61-0.72 from
// registers).
inline constexpr int kStreamResidualRows = 8;
inline constexpr int kStreamThreads = 256;
inline constexpr int kAttentionChunk = 64;  // decode_attention_split<GP, CH>: KV positions per chunk
inline constexpr int kArgmaxBlock = 2048;   // argmax_blocks<B>
inline constexpr int kArgmaxFinal = 256;    // argmax_final<BB>
inline constexpr int kTopKBlock = 1024;     // topk_blocks<B, K>
inline constexpr int kTopKMerge = 16;       // topk_merge<M, K>
inline constexpr int kTopK = 64;            // K: the sampling candidates
inline constexpr int kCopyRows = 4;         // weight_copy<BR, BC>
inline constexpr int kCopyCols = 1024;

}  // namespace qwen3::kernels

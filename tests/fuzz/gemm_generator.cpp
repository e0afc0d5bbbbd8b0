// gemm_generator.cpp: random GEMM-class kernels (see gemm_generator.h).
//
// The kernel is written as the front end writes `for_range` over `mma` (matmul_kernels.h):
//   (result f32 [BM BN] 0 (for f32 [BM BN] 0 ceil(K / BK) ((const zeros))
//     ((mma f32 [BM BN] (load A [BM BK] 1 (program_id 0) (iv 0))
//                       (load B [BK BN] 2 (iv 0) (program_id 1)) (carried 0 0)))))
// then the epilogue on that value and a cast to the output's dtype. Parameters: 0 the output, 1 A
// (M x K), 2 B (K x N: dense, or the transposed view of an N x K storage), then those the epilogue
// made (a scalar, a bias row [1 N], a residual [M N]).
#include "gemm_generator.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <string>
#include <vector>

namespace tessera::fuzz {
namespace {

std::string hex(double v) { return fmt::format("0x{:016x}", std::bit_cast<uint64_t>(v)); }
std::string i32(int64_t v) { return fmt::format("(const i32 [] {})", hex(static_cast<double>(v))); }

class GemmGenerator {
 public:
  explicit GemmGenerator(uint64_t seed) : rng_(seed ^ 0x243f6a8885a308d3ull) {
    c_.seed = seed;
    c_.name = fmt::format("fuzz_gemm_{}", seed);
  }

  FuzzCase run() {
    // Operands: bf16 and f16 most often (the lowerings' main case), f32 (tf32), 8-bit floats.
    const DType a = rng_.pick(std::vector<DType>{DType::bf16, DType::bf16, DType::f16, DType::f16, DType::f32,
                                                 DType::f8e4m3, DType::f8e4m3, DType::f8e5m2});
    const bool f8 = a == DType::f8e4m3 || a == DType::f8e5m2;
    const DType b = f8 && rng_.chance(0.3) ? (a == DType::f8e4m3 ? DType::f8e5m2 : DType::f8e4m3) : a;
    const int64_t bytes = static_cast<int64_t>(dtype_size(a));
    // 8-bit floats reach the tensor cores only with a K-major B: mostly that.
    const bool k_major = rng_.chance(f8 ? 0.8 : 0.5);
    // Half the kernels in the tiles of sm_90's wgmma lowering (BM 64/128, BN 64-256, 128 or 256
    // bytes of K), the others anywhere in the mma.sync lowering's range and beyond it.
    if (rng_.chance(0.5)) {
      bm_ = rng_.pick(std::vector<int64_t>{64, 128});
      bn_ = rng_.pick(std::vector<int64_t>{64, 128, 256});
      bk_ = rng_.pick(std::vector<int64_t>{128, 256}) / bytes;
    } else {
      bm_ = rng_.pick(std::vector<int64_t>{16, 32, 64, 128});
      bn_ = rng_.pick(std::vector<int64_t>{16, 32, 64, 128, 256});
      bk_ = rng_.pick(std::vector<int64_t>{32, 64, 128, 256}) / bytes;
    }
    // Keep each tile within 32768 elements (A and B) and the accumulator within 32768.
    while (bm_ * bn_ > 32768) bn_ /= 2;
    while (bm_ * bk_ > 32768 || bk_ * bn_ > 32768) bk_ /= 2;
    // Sizes: whole or ragged tiles, one to three along M and N, K one to three tiles or below one.
    const bool whole = rng_.chance(0.35);
    auto extent = [&](int64_t tile, int64_t tiles) {
      return whole ? tile * tiles : (tiles - 1) * tile + rng_.uniform(1, tile);
    };
    m_ = extent(bm_, rng_.uniform(1, bm_ >= 128 ? 2 : 3));
    n_ = extent(bn_, rng_.uniform(1, bn_ >= 128 ? 2 : 3));
    k_ = rng_.chance(0.15) ? rng_.uniform(1, bk_) : extent(bk_, rng_.uniform(1, 3));
    // Rows of 16 bytes (TMA's and cp.async's alignment) in most cases; the rest take the loops.
    const int64_t align = 16 / bytes;
    if (rng_.chance(0.85)) k_ = (k_ + align - 1) / align * align;
    const DType out = rng_.pick(std::vector<DType>{DType::f32, DType::bf16, DType::f16});

    ParamSpec o;
    o.kind = ParamKind::out;
    o.dtype = out;
    o.shape = {m_, n_};
    o.tile = {bm_, bn_};
    dense(o, "dense", false);
    c_.params.push_back(o);
    ParamSpec pa;
    pa.dtype = a;
    pa.shape = {m_, k_};
    dense(pa, "dense", true);
    c_.params.push_back(pa);
    ParamSpec pb;
    pb.dtype = b;
    pb.shape = {k_, n_};
    if (k_major) {
      // The transposed view of an N x K row-major storage: element (k, n) at n K + k.
      pb.strides = {1, k_};
      pb.storage_elems = n_ * k_;
      pb.view = "transposed";
      fill(pb);
    } else {
      dense(pb, "dense", true);
    }
    c_.params.push_back(pb);
    features_.push_back(fmt::format("gemm {}{}", dtype_name(a), b == a ? "" : fmt::format(" x {}", dtype_name(b))));
    features_.push_back(k_major ? "gemm K-major B" : "gemm row-major B");

    const std::string t = fmt::format("f32 [{} {}]", bm_, bn_);
    const std::string trips =
        fmt::format("(div i32 [] (add i32 [] (dim i32 [] 1 1) {}) {})", i32(bk_ - 1), i32(bk_));
    const std::string load_a =
        fmt::format("(load {} [{} {}] 1 (program_id i32 [] 0) (iv i32 [] 0))", dtype_name(a), bm_, bk_);
    const std::string load_b =
        fmt::format("(load {} [{} {}] 2 (iv i32 [] 0) (program_id i32 [] 1))", dtype_name(b), bk_, bn_);
    std::string x = fmt::format("(result {0} 0 (for {0} 0 {1} ((const {0} {2})) ((mma {0} {3} {4} (carried {0} 0 0)))))",
                                t, trips, hex(0.0), load_a, load_b);
    const int steps = static_cast<int>(rng_.uniform(0, 3));
    for (int s = 0; s < steps; ++s) x = epilogue_step(x, t);
    if (out != DType::f32) x = fmt::format("(cast {} [{} {}] {})", dtype_name(out), bm_, bn_, x);

    c_.ast = fmt::format("(kernel {} (body (store 0 {})))", params_text(c_.params), x);
    c_.whole_tiles = rng_.chance(0.5);
    c_.static_shapes = rng_.chance(0.15);
    c_.features = features_;
    add_random_hints(c_, /*gemm=*/true);
    sort_features(c_);
    return std::move(c_);
  }

 private:
  // Row-major strides over the view's own shape; contents random (inputs) or zero (the output).
  void dense(ParamSpec& p, const char* view, bool random) {
    p.strides = {p.shape[1], 1};
    p.storage_elems = p.shape[0] * p.shape[1];
    p.view = view;
    if (random) fill(p);
    else p.storage.assign(static_cast<std::size_t>(p.storage_elems), 0.0);
  }

  // Small finite values of the dtype: whole numbers in [-4, 4] or values in [-2, 2).
  void fill(ParamSpec& p) {
    p.storage.resize(static_cast<std::size_t>(p.storage_elems));
    for (double& v : p.storage)
      v = rng_.chance(0.2) ? static_cast<double>(rng_.uniform(-4, 4)) : round_to(p.dtype, (rng_.unit() * 2 - 1) * 2);
  }

  // One elementwise step on `x` (of type `t`), as a fused epilogue has them.
  std::string epilogue_step(const std::string& x, const std::string& t) {
    const std::string shape = fmt::format("[{} {}]", bm_, bn_);
    switch (rng_.uniform(0, 4)) {
      case 0: {  // a scale: a scalar parameter, broadcast
        ParamSpec s;
        s.kind = ParamKind::scalar;
        s.dtype = DType::f32;
        s.scalar = rng_.pick(std::vector<double>{0.5, 0.25, -1.5, 3.0});
        c_.params.push_back(s);
        features_.push_back("gemm epilogue scale");
        return fmt::format("(mul {0} {1} (broadcast {0} (arg f32 [] {2})))", t, x, c_.params.size() - 1);
      }
      case 1: {  // a bias row [1 N], bf16 or f32, broadcast over the tile's rows
        ParamSpec bias;
        bias.dtype = rng_.chance(0.5) ? DType::bf16 : DType::f32;
        bias.shape = {1, n_};
        dense(bias, "dense", true);
        c_.params.push_back(bias);
        const int64_t p = static_cast<int64_t>(c_.params.size()) - 1;
        features_.push_back("gemm epilogue bias");
        std::string row = fmt::format("(load {} [1 {}] {} {} (program_id i32 [] 1))", dtype_name(bias.dtype), bn_, p, i32(0));
        if (bias.dtype != DType::f32) row = fmt::format("(cast f32 [1 {}] {})", bn_, row);
        return fmt::format("(add {0} {1} (broadcast {0} {2}))", t, x, row);
      }
      case 2: {  // a residual tile of another M x N input
        ParamSpec r;
        r.dtype = rng_.chance(0.5) ? DType::bf16 : DType::f32;
        r.shape = {m_, n_};
        dense(r, "dense", true);
        c_.params.push_back(r);
        const int64_t p = static_cast<int64_t>(c_.params.size()) - 1;
        features_.push_back("gemm epilogue residual");
        std::string tile = fmt::format("(load {} [{} {}] {} (program_id i32 [] 0) (program_id i32 [] 1))",
                                       dtype_name(r.dtype), bm_, bn_, p);
        if (r.dtype != DType::f32) tile = fmt::format("(cast {} {})", t, tile);
        return fmt::format("(add {} {} {})", t, x, tile);
      }
      case 3:
        features_.push_back("gemm epilogue relu");
        return fmt::format("(max {0} {1} (const {0} {2}))", t, x, hex(0.0));
      default:
        features_.push_back("gemm epilogue tanh");
        return fmt::format("(tanh {} {})", t, x);
    }
  }

  Rng rng_;
  FuzzCase c_;
  std::vector<std::string> features_;
  int64_t bm_ = 0, bn_ = 0, bk_ = 0, m_ = 0, n_ = 0, k_ = 0;
};

}  // namespace

FuzzCase generate_gemm(uint64_t seed) { return GemmGenerator(seed).run(); }

}  // namespace tessera::fuzz

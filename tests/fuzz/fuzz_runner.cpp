// fuzz_runner.cpp: launching a case through the internal entry point and comparing (see fuzz_runner.h).
#include "fuzz_runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tessera/kernel.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <map>
#include <new>

#include "reference_interpreter.h"

namespace tessera::fuzz {
namespace {

std::vector<detail::ArgDesc> make_args(const FuzzCase& c) {
  std::vector<detail::ArgDesc> args;
  for (const ParamSpec& p : c.params) {
    detail::ArgDesc a;
    a.dtype = p.dtype;
    if (p.kind == ParamKind::scalar) {
      a.kind = detail::ArgDesc::Kind::scalar;
      store_element(p.dtype, a.scalar.data(), 0, p.scalar);
      args.push_back(std::move(a));
      continue;
    }
    a.kind = p.kind == ParamKind::out ? detail::ArgDesc::Kind::out : detail::ArgDesc::Kind::in;
    a.rank = static_cast<int>(p.shape.size());
    for (int d = 0; d < a.rank; ++d) {
      a.shape[d] = p.shape[d];
      a.strides[d] = p.strides[d];
      if (p.kind == ParamKind::out) a.tile[d] = p.tile[d];
    }
    a.offset = p.offset;
    a.storage = std::make_shared<detail::Storage>(static_cast<std::size_t>(p.storage_elems) * dtype_size(p.dtype));
    std::byte* host = a.storage->host_for_write();
    for (int64_t i = 0; i < p.storage_elems; ++i) store_element(p.dtype, host, i, p.storage[i]);
    if (c.frozen_inputs && p.kind == ParamKind::in) a.storage->freeze();
    args.push_back(std::move(a));
  }
  return args;
}

LaunchOptions options_of(const FuzzCase& c, Target target) {
  LaunchOptions o;
  o.target = target;
  o.whole_tiles = c.whole_tiles;
  o.static_shapes = c.static_shapes;
  o.hints = c.hints;
  return o;
}

// The view coordinates of each storage element of a tensor parameter that its view covers.
std::map<int64_t, std::vector<int64_t>> view_coordinates(const ParamSpec& p) {
  std::map<int64_t, std::vector<int64_t>> at;
  int64_t n = 1;
  for (int64_t s : p.shape) n *= s;
  std::vector<int64_t> c(p.shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t addr = p.offset;
    for (std::size_t d = 0; d < c.size(); ++d) addr += c[d] * p.strides[d];
    at[addr] = c;
    for (std::size_t d = c.size(); d-- > 0 && ++c[d] == p.shape[d];) c[d] = 0;
  }
  return at;
}

bool matches(DType d, double got, const Elem& want) {
  if (want.e == 0) {
    if (!is_float_dtype(d)) return got == want.v;
    if (std::isnan(want.v)) return std::isnan(got);
    return got == want.v && std::signbit(got) == std::signbit(want.v);
  }
  return std::isfinite(got) && std::fabs(got - want.v) <= want.e;
}

std::string format_value(double v) { return fmt::format("{}", v); }

}  // namespace

FuzzCase with_ast(const FuzzCase& c, std::string ast) {
  static std::atomic<uint64_t> variant{0};
  FuzzCase v = c;
  v.ast = std::move(ast);
  v.name = fmt::format("fuzz_{}_v{}", c.seed, variant.fetch_add(1));
  return v;
}

Outcome run_case(const FuzzCase& c, Target target) {
  Outcome out;
  std::vector<ExpectedStorage> expected;
  try {
    expected = interpret(c, OpContext{target != Target::cpu});
  } catch (const std::exception& e) {
    out.kind = Outcome::Kind::reference_error;
    out.report = fmt::format("the reference interpreter failed: {}", e.what());
    return out;
  }
  std::vector<detail::ArgDesc> args = make_args(c);
  const LaunchOptions options = options_of(c, target);
  try {
    detail::launch(detail::LaunchRequest{c.name, c.ast, args, nullptr, &options, true}, target);
  } catch (const std::exception& e) {
    out.kind = Outcome::Kind::launch_error;
    out.report = fmt::format("the launch of a valid kernel threw: {}", e.what());
    return out;
  }
  std::string report;
  int64_t bad = 0;
  for (std::size_t i = 0; i < c.params.size(); ++i) {
    const ParamSpec& p = c.params[i];
    if (p.kind != ParamKind::out) continue;
    const std::byte* host = args[i].storage->host_for_read();
    std::map<int64_t, std::vector<int64_t>> coords;
    for (int64_t k = 0; k < p.storage_elems; ++k) {
      const Elem& want = expected[i].elems[k];
      if (!(want.e < kUnknown)) {
        ++out.unknown;
        continue;
      }
      ++out.checked;
      const double got = load_element(p.dtype, host, k);
      if (matches(p.dtype, got, want)) continue;
      if (bad++ < 10) {
        if (coords.empty()) coords = view_coordinates(p);
        auto at = coords.find(k);
        const std::string where = at == coords.end() ? "outside the view" : fmt::format("[{}]", fmt::join(at->second, ", "));
        report += fmt::format("  output {} element {} (storage index {}): got {}, expected {} (bound {})\n", i, where, k,
                              format_value(got), format_value(want.v), want.e);
      }
    }
  }
  if (bad) {
    out.kind = Outcome::Kind::mismatch;
    out.report = fmt::format("{} of {} checked output elements differ from the reference:\n{}", bad, out.checked, report);
  }
  return out;
}

LaunchOnly launch_only(const FuzzCase& c, Target target) {
  LaunchOnly r;
  std::vector<detail::ArgDesc> args = make_args(c);
  const LaunchOptions options = options_of(c, target);
  try {
    detail::launch(detail::LaunchRequest{c.name, c.ast, args, nullptr, &options, true}, target);
  } catch (const Error& e) {
    r.threw = true;
    r.message = e.what();
  } catch (const std::bad_alloc&) {
    r.message = "std::bad_alloc";
  } catch (const std::exception& e) {
    r.ok = false;
    r.message = fmt::format("threw an exception other than tessera::Error: {}", e.what());
  } catch (...) {
    r.ok = false;
    r.message = "threw something other than a std::exception";
  }
  return r;
}

CompiledArtifact compile_case(const FuzzCase& c, Target target) {
  std::vector<detail::ArgDesc> args = make_args(c);
  const LaunchOptions options = options_of(c, target);
  return detail::compile(detail::LaunchRequest{c.name, c.ast, args, nullptr, &options, true}, target);
}

std::string compile_only(const FuzzCase& c, Target target) {
  try {
    compile_case(c, target);
  } catch (const std::exception& e) {
    return fmt::format("compiling a valid kernel for {} threw: {}", target == Target::cpu ? "cpu" : "a GPU", e.what());
  }
  return "";
}

std::string describe(const FuzzCase& c) {
  std::string s = fmt::format("seed {}  kernel '{}'  whole_tiles={} static_shapes={}\n", c.seed, c.name, c.whole_tiles,
                              c.static_shapes);
  if (!(c.hints == CompilerHints{}) || c.frozen_inputs) {
    const CompilerHints& h = c.hints;
    s += fmt::format("  hints: threads={} occupancy={} split_k={} stream_stages={} bulk_streams={} "
                     "early_frozen_steps={} pipeline_stages={} group_rows={}; inputs frozen={}\n",
                     h.threads, h.occupancy, h.split_k, h.stream_stages, h.bulk_streams, h.early_frozen_steps,
                     h.pipeline_stages, h.group_rows, c.frozen_inputs);
  }
  for (std::size_t i = 0; i < c.params.size(); ++i) {
    const ParamSpec& p = c.params[i];
    if (p.kind == ParamKind::scalar) {
      s += fmt::format("  param {}: scalar {} = {}\n", i, dtype_name(p.dtype), p.scalar);
      continue;
    }
    s += fmt::format("  param {}: {} {} shape [{}] strides [{}] offset {} storage {} ({}){}\n", i,
                     p.kind == ParamKind::out ? "out" : "in", dtype_name(p.dtype), fmt::join(p.shape, " "),
                     fmt::join(p.strides, " "), p.offset, p.storage_elems, p.view,
                     p.kind == ParamKind::out ? fmt::format(" tile [{}]", fmt::join(p.tile, " ")) : "");
  }
  s += fmt::format("  ast: {}\n", c.ast);
  return s;
}

}  // namespace tessera::fuzz

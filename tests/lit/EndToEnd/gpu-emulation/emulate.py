#!/usr/bin/env python3
"""Differential test of the gpu lowerings of convert-tile-to-loops and
convert-tile-matmul-to-mma-sync, on the host.

The kernel in the test file is lowered twice:
  * for the gpu target with T threads; its nvvm ops and cluster inline asm
    become calls into runtime.cpp (thread and CTA ids, barriers, warp shuffles,
    mma.sync of bf16 or f16, ldmatrix, cp.async, cluster barriers and loads), shared memory
    an ordinary global (address spaces 1 and 3 become the host's 0), and the
    whole is compiled for the host and run with one std::thread per GPU
    thread, CTA after CTA (cluster after cluster, see K);
  * for the cpu target (one thread per program), as the reference.
Both runs start from the same pseudo-random buffers; every buffer must end up
equal (floats within a tolerance: reductions combine in different orders).
Any other nvvm op or inline asm is rejected.

The test file names the launch in one line:
  // EMU: T=<threads, 0 = chosen by the pass> [S=<CTAs per program>]
  //      [K=<split-K CTAs>] [E=<early steps>] grid=<g0>,<g1> args=<arg>;<arg>...
  // EMU: MMA=<arch> [K=<split-K CTAs>] [G=<group rows>] grid=<g0>,<g1> args=<arg>;<arg>...
  // EMU: ATTN=<arch> [STAGES=<K/V stages>] grid=<g0>,<g1> args=<arg>;<arg>...
where <arg> is <dtype>[<d0>x<d1>...] or <dtype>[<n>], optionally /<row stride>,
one per kernel argument (memrefs only, row-major, unit inner stride); a
matrix's suffix ^T passes the transposed view of that d0 x d1 buffer instead
(sizes d1, d0, strides 1, row stride: a K-major B). S (default 1; 0 = chosen
by the pass) is passed as ctas-per-program: the gpu run then has g0 * S CTAs
along x of T / S threads each (the tile.block_size and tile.ctas_per_program
the pass reports). K (default 1; not with S) runs tile-split-k-loop ctas=K
before the gpu lowering only (the cpu reference stays unsplit), which must
split the kernel (tile.split_k = K): the gpu run has g0 * K CTAs along x of T
threads each, and the K CTAs of a cluster run together, K * T threads. Each
rank needs its own shared memory, so the module is compiled K times, kernel
and shared-memory globals renamed <name>_r<k> (made public so that the
harness registers their addresses with the runtime, which maps rank k's
addresses onto the same offset in another rank's copy); rank k's threads run
copy k. A kernel whose scratch is dynamic shared memory
(tile.dynamic_shared_bytes = N) declares it as an external array; the harness
defines it (one per copy) with the N bytes a launch would pass.
E (default 0) runs tile-load-settled-before-wait steps=E before the gpu
lowering only, which must take the kernel (it then has a grid dependency
wait, which on the host, where every earlier launch has ended, is nothing).
MMA=<arch> lowers the gpu side with convert-tile-matmul-to-mma-sync
arch=<arch> split-k=K group-rows=G (G default 0, the pass's) instead (no
tile-split-k-loop), which must take the
kernel (tile.mma_sync); T, S and the split are the ones it reports, as above,
and its dynamic shared memory is defined the same way. ATTN=<arch> does the
same with convert-tile-attention-to-mma-sync arch=<arch> stages=<STAGES, default 0>.
"""
import argparse
import os
import re
import subprocess
import sys

CTYPES = {"f32": "float", "f64": "double", "bf16": "uint16_t", "f16": "uint16_t", "i1": "uint8_t",
          "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t"}
TO_LLVM = ["-convert-scf-to-cf", "-convert-math-to-llvm", "-convert-arith-to-llvm", "-convert-index-to-llvm",
           "-convert-cf-to-llvm", "-convert-vector-to-llvm", "-finalize-memref-to-llvm", "-convert-func-to-llvm",
           "-reconcile-unrealized-casts"]
RUNTIME_DECLS = """  func.func private @emu_tid() -> i32
  func.func private @emu_ctaid_x() -> i32
  func.func private @emu_ctaid_y() -> i32
  func.func private @emu_ctaid_z() -> i32
  func.func private @emu_nctaid_x() -> i32
  func.func private @emu_nctaid_y() -> i32
  func.func private @emu_nctaid_z() -> i32
  func.func private @emu_barrier()
  func.func private @emu_shfl_f32(f32, i32) -> f32
  func.func private @emu_shfl_i32(i32, i32) -> i32
  func.func private @emu_mma_bf16_0(i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> f32
  func.func private @emu_mma_bf16_1(i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> f32
  func.func private @emu_mma_bf16_2(i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> f32
  func.func private @emu_mma_bf16_3(i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> f32
  func.func private @emu_mma_f16_0(i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> f32
  func.func private @emu_mma_f16_1(i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> f32
  func.func private @emu_mma_f16_2(i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> f32
  func.func private @emu_mma_f16_3(i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> f32
  func.func private @emu_cluster_barrier()
  func.func private @emu_cluster_load_f32(i32, i32) -> f32
  func.func private @emu_cp_async_16(!llvm.ptr, !llvm.ptr, i32)
  func.func private @emu_ldmatrix_row_0(!llvm.ptr) -> i32
  func.func private @emu_ldmatrix_row_1(!llvm.ptr) -> i32
  func.func private @emu_ldmatrix_row_2(!llvm.ptr) -> i32
  func.func private @emu_ldmatrix_row_3(!llvm.ptr) -> i32
  func.func private @emu_ldmatrix_col_0(!llvm.ptr) -> i32
  func.func private @emu_ldmatrix_col_1(!llvm.ptr) -> i32
  func.func private @emu_ldmatrix_col_2(!llvm.ptr) -> i32
  func.func private @emu_ldmatrix_col_3(!llvm.ptr) -> i32
"""
# The cluster barrier and distributed shared-memory load of LowerSplitK.cpp
# (HopperPtx), as printed.
CLUSTER_BARRIER = re.compile(r'llvm\.inline_asm has_side_effects "barrier\.cluster\.arrive\.release;\\0A\\09'
                             r'barrier\.cluster\.wait\.acquire;", "~\{memory\}"\s*: \(\) -> \(\)')
CLUSTER_LOAD = re.compile(r'llvm\.inline_asm has_side_effects "\{\\0A\\09\.reg \.b32 a;\\0A\\09'
                          r'mapa\.shared::cluster\.u32 a, \$1, \$2;\\0A\\09ld\.shared::cluster\.f32 \$0, '
                          r'\[a\];\\0A\\09\}", "=f,r,r,~\{memory\}" (%[\w-]+), (%[\w-]+) : \(i32, i32\) -> f32')
ELEMENT_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "bf16": 2, "f16": 2, "f32": 4, "f64": 8}


def run(cmd, stdin=None):
    return subprocess.run(cmd, input=stdin, check=True, capture_output=True, text=True).stdout


def calls_to_struct(indent, name, callee, args, types, result, struct):
    """%name, a struct of four `result`s, as four runtime calls (callee_<i>,
    one per element) and the struct of their results."""
    lines = [f"{indent}%emu{name}_{i} = func.call @{callee}_{i}({args}) : ({types}) -> {result}" for i in range(4)]
    lines.append(f"{indent}%emu{name}_s = llvm.mlir.undef : {struct}")
    prev = f"%emu{name}_s"
    for i in range(4):
        out = f"%{name}" if i == 3 else f"%emu{name}_s{i}"
        lines.append(f"{indent}{out} = llvm.insertvalue %emu{name}_{i}, {prev}[{i}] : {struct}")
        prev = out
    return "\n".join(lines)


def mma_sync_to_calls(m):
    """A bf16 or f16 mma.sync m16n8k16 as calls of emu_mma_<type>_<i>."""
    indent, name, a, b, c, t, struct = m.groups()
    return calls_to_struct(indent, name, f"emu_mma_{t}", ", ".join([a, b, c]),
                           "i32, i32, i32, i32, i32, i32, f32, f32, f32, f32", "f32", struct)


def mma_sync_f16_to_calls(m):
    """An f16 mma.sync m16n8k16 (its A and B operands vector<2xf16>) as
    bitcasts to i32 and calls of emu_mma_f16_<i>."""
    indent, name, a, b, c, struct = m.groups()
    words = [w.strip() for w in (a + ", " + b).split(",")]
    casts = [f"{indent}%emu{name}_w{j} = llvm.bitcast {w} : vector<2xf16> to i32" for j, w in enumerate(words)]
    return "\n".join(casts) + "\n" + calls_to_struct(
        indent, name, "emu_mma_f16", ", ".join([f"%emu{name}_w{j}" for j in range(len(words))] + [c]),
        "i32, i32, i32, i32, i32, i32, f32, f32, f32, f32", "f32", struct)


def ldmatrix_to_calls(m):
    """An ldmatrix.x4 of b16 (layout col: .trans) as calls of
    emu_ldmatrix_<layout>_<i>."""
    indent, name, addr, layout, struct = m.groups()
    return calls_to_struct(indent, name, f"emu_ldmatrix_{layout}", addr, "!llvm.ptr", "i32", struct)


def to_host(nvvm_ir):
    """Replaces the nvvm ops of a gpu-lowered module by runtime calls."""
    s = re.sub(r"nvvm\.read\.ptx\.sreg\.tid\.x( range <i32, 0, \d+>)? : i32", "func.call @emu_tid() : () -> i32",
               nvvm_ir)
    s = re.sub(r"nvvm\.read\.ptx\.sreg\.(n?ctaid)\.([xyz]) : i32", r"func.call @emu_\1_\2() : () -> i32", s)
    s = s.replace("nvvm.barrier0", "func.call @emu_barrier() : () -> ()")
    s = re.sub(r"nvvm\.shfl\.sync\s+bfly %[\w-]+, (%[\w-]+), (%[\w-]+), %[\w-]+ : (\w+) -> \w+",
               r"func.call @emu_shfl_\3(\1, \2) : (\3, i32) -> \3", s)
    s = re.sub(r"( *)%(\w+) = nvvm\.mma\.sync A\[([^\]]*)\]\s+B\[([^\]]*)\]\s+C\[([^\]]*)\]\s+\{[^}]*"
               r"multiplicandAPtxType = #nvvm\.mma_type<(bf16|f16)>[^}]*shape = #nvvm\.shape<m = 16, n = 8, k = 16>\} : "
               r"\(i32, i32, f32\) -> (!llvm\.struct<\(f32, f32, f32, f32\)>)", mma_sync_to_calls, s)
    s = re.sub(r"( *)%(\w+) = nvvm\.mma\.sync A\[([^\]]*)\]\s+B\[([^\]]*)\]\s+C\[([^\]]*)\]\s+\{[^}]*"
               r"shape = #nvvm\.shape<m = 16, n = 8, k = 16>\} : "
               r"\(vector<2xf16>, vector<2xf16>, f32\) -> (!llvm\.struct<\(f32, f32, f32, f32\)>)",
               mma_sync_f16_to_calls, s)
    # One launch at a time: the grids a kernel waits for have all ended.
    s = re.sub(r'^ *llvm\.inline_asm has_side_effects "griddepcontrol\.wait;".*\n', "", s, flags=re.M)
    s = CLUSTER_BARRIER.sub("func.call @emu_cluster_barrier() : () -> ()", s)
    s = CLUSTER_LOAD.sub(r"func.call @emu_cluster_load_f32(\1, \2) : (i32, i32) -> f32", s)
    # convert-tile-matmul-to-mma-sync: a cp.async completes at once, so the
    # commit groups and waits for them have nothing left to do.
    s = re.sub(r"nvvm\.cp\.async\.shared\.global (%[\w-]+), (%[\w-]+), 16, cache =\s+cg, (%[\w-]+) : "
               r"!llvm\.ptr<3>, !llvm\.ptr<1>, i32",
               r"func.call @emu_cp_async_16(\1, \2, \3) : (!llvm.ptr, !llvm.ptr, i32) -> ()", s)
    s = re.sub(r"^ *nvvm\.cp\.async\.(commit\.group|wait\.group \d+)\n", "", s, flags=re.M)
    s = re.sub(r"( *)%(\w+) = nvvm\.ldmatrix (%[\w-]+) \{eltType = #nvvm\.ld_st_matrix_elt_type<b16>, "
               r"layout = #nvvm\.mma_layout<(row|col)>, num = 4 : i32, shape = #nvvm\.ld_st_matrix_shape<m = 8, "
               r"n = 8>\} : \(!llvm\.ptr<3>\) -> (!llvm\.struct<\(i32, i32, i32, i32\)>)", ldmatrix_to_calls, s)
    # Address spaces 1 (global) and 3 (shared) are the host's one: shared
    # memory is a plain global, an address space cast a no-op.
    s = re.sub(r"(memref<[^<>]*), 3>", r"\1>", s)
    s = re.sub(r"!llvm\.ptr<[13]>", "!llvm.ptr", s)
    s = s.replace("{addr_space = 3 : i32, ", "{")
    s = re.sub(r"llvm\.addrspacecast (%[\w-]+) : !llvm\.ptr to !llvm\.ptr",
               r"llvm.bitcast \1 : !llvm.ptr to !llvm.ptr", s)
    for what, mark in (("nvvm op", "nvvm."), ("inline asm", "llvm.inline_asm")):
        leftover = [line for line in s.splitlines() if mark in line]
        if leftover:
            sys.exit(f"emulate.py: unsupported {what}: " + leftover[0].strip())
    return s.replace("module {\n", "module {\n" + RUNTIME_DECLS, 1)


def runtime_object(cxx, work):
    """runtime.cpp compiled once per build tree (shared by the tests, written
    atomically since tests run in parallel)."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime.cpp")
    obj = os.path.join(os.path.dirname(os.path.abspath(work)), "gpu-emulation-runtime.o")
    if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(src):
        tmp = f"{obj}.{os.getpid()}.tmp"
        run([cxx, "-std=c++20", "-O1", "-c", src, "-o", tmp])
        os.replace(tmp, obj)
    return obj


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--tools", required=True)
    ap.add_argument("--llvm-tools", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("kernel")
    a = ap.parse_args()
    opt = os.path.join(a.tools, "tessera-opt")
    translate = os.path.join(a.llvm_tools, "mlir-translate")
    llc = os.path.join(a.llvm_tools, "llc")
    os.makedirs(a.work, exist_ok=True)
    text = open(a.kernel).read()
    spec = dict(kv.split("=", 1) for kv in re.search(r"// EMU: (.*)", text).group(1).split())
    mma = spec.get("MMA")
    attention = spec.get("ATTN")
    if attention and (mma or "K" in spec):
        sys.exit("emulate.py: ATTN excludes MMA and K")
    if (mma or attention) and ("T" in spec or "S" in spec):
        sys.exit("emulate.py: with MMA or ATTN the pass chooses the CTA; T and S do not apply")
    threads = 0 if mma or attention else int(spec["T"])
    ctas = int(spec.get("S", "1"))
    split_k = int(spec.get("K", "1"))
    early = int(spec.get("E", "0"))
    if early and (mma or attention):
        sys.exit("emulate.py: E applies to convert-tile-to-loops' kernels, not with MMA")
    if split_k > 1 and "S" in spec:
        sys.exit("emulate.py: S and K exclude each other (a split-K program is K CTAs)")
    g0, g1 = (int(v) for v in spec["grid"].split(","))
    args = []
    for arg in spec["args"].split(";"):
        m = re.fullmatch(r"(\w+)\[([\dx]+)\](?:/(\d+))?(\^T)?", arg)
        dims = [int(d) for d in m.group(2).split("x")]
        if m.group(4) and len(dims) != 2:
            sys.exit(f"emulate.py: ^T needs a matrix: {arg}")
        args.append((m.group(1), dims, int(m.group(3)) if m.group(3) else dims[-1], bool(m.group(4))))
    fn = re.search(r"func\.func @(\w+)", text).group(1)

    def compile_ir(mlir, name):
        ll = run([translate, "--mlir-to-llvmir"], run([opt] + TO_LLVM, mlir))
        obj = os.path.join(a.work, name + ".o")
        run([llc, "-O2", "-filetype=obj", "-relocation-model=pic", "-o", obj], ll)
        return obj

    if attention:
        stages = spec.get("STAGES", "0")
        gpu = run([opt, a.kernel, f"-convert-tile-attention-to-mma-sync=arch={attention} stages={stages}",
                   "-canonicalize", "-cse"])
        if not re.search(rf"func\.func @{fn}\(.*attributes \{{[^}}]*tile\.mma_sync", gpu):
            sys.exit(f"emulate.py: convert-tile-attention-to-mma-sync (arch={attention}) did not take @{fn}")
    elif mma:
        group = spec.get("G", "0")
        gpu = run([opt, a.kernel,
                   f"-convert-tile-matmul-to-mma-sync=arch={mma} split-k={split_k} group-rows={group}",
                   "-canonicalize", "-cse"])
        if not re.search(rf"func\.func @{fn}\(.*attributes \{{[^}}]*tile\.mma_sync", gpu):
            sys.exit(f"emulate.py: convert-tile-matmul-to-mma-sync (arch={mma}) did not take @{fn}")
    else:
        split_pass = [f"-tile-split-k-loop=ctas={split_k}"] if split_k > 1 else []
        if early:
            split_pass.append(f"-tile-load-settled-before-wait=steps={early}")
            taken = run([opt, a.kernel] + split_pass)
            if "tile.grid_dependency_wait" not in taken:
                sys.exit(f"emulate.py: tile-load-settled-before-wait (steps={early}) did not take @{fn}")
        gpu = run([opt, a.kernel] + split_pass +
                  [f"-convert-tile-to-loops=target=gpu block-size={threads} ctas-per-program={ctas}",
                   "-canonicalize", "-cse"])
    threads = int(re.search(r"tile\.block_size = (\d+) : i32", gpu).group(1))
    split = re.search(r"tile\.ctas_per_program = (\d+) : i32", gpu)
    ctas = int(split.group(1)) if split else 1
    cluster = re.search(r"tile\.split_k = (\d+) : i32", gpu)
    cluster = int(cluster.group(1)) if cluster else 1
    if cluster != split_k:
        sys.exit(f"emulate.py: K={split_k} but the lowered kernel has tile.split_k = {cluster}")
    dynamic = re.search(r"tile\.dynamic_shared_bytes = (\d+) : i32", gpu)
    # Shared memory (address space 3): name, bytes, whether the harness defines it (dynamic), alignment.
    shared = []
    for name, shape, init in re.findall(r'memref\.global (?:"private" )?@(\w+) : memref<([^<>]*), 3>( =)?', gpu):
        *dims, elem = shape.split("x")
        size = ELEMENT_BYTES[elem]
        for d in dims:
            size *= int(d)
        shared.append((name, int(dynamic.group(1)) if dynamic and not init else size, not init, 16))
    # convert-tile-matmul-to-mma-sync's dynamic shared memory.
    for name, align in re.findall(r"llvm\.mlir\.global external @(\w+)\(\) \{addr_space = 3 : i32, "
                                  r"alignment = (\d+) : i64\} : !llvm\.array<0 x i8>", gpu):
        shared.append((name, int(dynamic.group(1)), True, int(align)))
    host = to_host(gpu)
    suffixes = [f"_r{k}" for k in range(cluster)] if cluster > 1 else [""]
    gpu_objs = []
    for suffix in suffixes:
        copy = host
        if suffix:  # copy k of a cluster's kernel: its own, public, shared memory
            copy = copy.replace(f"@{fn}(", f"@{fn}{suffix}(")
            for name, _, _, _ in shared:
                copy = re.sub(rf'(memref\.global )"private" (@{name}\b)', r"\1\2", copy)
                copy = re.sub(rf"@{name}\b", f"@{name}{suffix}", copy)
        gpu_objs.append(compile_ir(copy, "gpu" + suffix))
    scratch = "".join(f'extern "C" {{ alignas({align}) unsigned char {name}{suffix}[{size}]; }}\n' if defined
                      else f'extern "C" unsigned char {name}{suffix}[];\n'
                      for suffix in suffixes for name, size, defined, align in shared
                      if defined or suffix)
    regions = "".join(f"emu_shared_region({k}, {name}{suffix}, {size});\n  "
                      for k, suffix in enumerate(suffixes) for name, size, _, _ in shared if suffix)
    cpu = run([opt, a.kernel, "-convert-tile-to-loops", "-canonicalize", "-cse"])
    cpu_obj = compile_ir(cpu.replace(f"@{fn}(", f"@cpu_{fn}("), "cpu")

    decls, gpu_args, cpu_args, setup, checks = [], [], [], [], []
    for i, (dt, dims, ld, transposed) in enumerate(args):
        rank = len(dims)
        decls.append(", ".join(["void*", "void*", "int64_t"] + ["int64_t"] * (2 * rank)))
        # Row-major: rows of `ld` elements, each outer dimension its inner ones' rows.
        row_major = [1] if rank == 1 else [ld, 1]
        for d in range(rank - 3, -1, -1):
            row_major.insert(0, row_major[0] * dims[d + 1])
        count = dims[0] * row_major[0]
        setup.append(f"g{i}.resize({count}); fill(g{i}, {i}, \"{dt}\"); c{i} = g{i}; o{i} = g{i};")
        sizes = ", ".join(f"int64_t({d})" for d in (dims[::-1] if transposed else dims))
        strides = ", ".join(f"int64_t({x})" for x in ([1, ld] if transposed else row_major))
        gpu_args.append(f"g{i}.data(), g{i}.data(), int64_t(0), {sizes}, {strides}")
        cpu_args.append(f"c{i}.data(), c{i}.data(), int64_t(0), {sizes}, {strides}")
        checks.append(f'bad += compare("arg{i}", g{i}, c{i}, o{i}, "{dt}");')
    harness = f"""#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>
extern "C" void emu_run(int threads, int cluster, int grid0, int grid1, void (*const* kernels)(void*), void* context);
extern "C" void emu_shared_region(int rank, void* base, int64_t bytes);
{scratch}{"".join(f'extern "C" void {fn}{suffix}({", ".join(decls)});{chr(10)}' for suffix in suffixes)}extern "C" void cpu_{fn}({", ".join(decls)}, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t);
static float bf16_to_f32(uint16_t h) {{ uint32_t b = uint32_t(h) << 16; float f; std::memcpy(&f, &b, 4); return f; }}
static float f16_to_f32(uint16_t h) {{
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float mag = e == 0 ? std::ldexp(float(m), -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(float(m | 0x400), e - 25);
  return h >> 15 ? -mag : mag;
}}
// 16-bit floats: bf16 bits, or (dt f16) a normal f16 of magnitude [0.25, 4) with a random sign.
template <class V> void fill(V& v, int seed, std::string dt) {{
  using E = typename V::value_type;
  uint32_t state = 2654435761u * (seed + 1);
  for (auto& x : v) {{
    state = state * 1664525u + 1013904223u;
    float f = (state >> 8) * (8.0f / 16777216.0f) - 4.0f;  // [-4, 4)
    if constexpr (std::is_same_v<E, uint16_t>) {{
      if (dt == "f16") x = uint16_t((state >> 31) << 15 | (13 + (state >> 8) % 4) << 10 | (state >> 12) & 0x3ff);
      else {{ uint32_t b; std::memcpy(&b, &f, 4); x = uint16_t(b >> 16); }}
    }}
    else if constexpr (std::is_same_v<E, uint8_t>) x = f > 0;
    else if constexpr (std::is_floating_point_v<E>) x = f;
    else x = E(f * 25);
  }}
}}
template <class V> int compare(const char* what, const V& g, const V& c, const V& o, std::string dt) {{
  int bad = 0;
  size_t written = 0;
  for (size_t i = 0; i < g.size(); ++i) {{
    written += std::memcmp(&c[i], &o[i], sizeof(c[i])) != 0;
    double x, y;
    if constexpr (std::is_same_v<typename V::value_type, uint16_t>) {{
      auto decode = dt == "f16" ? f16_to_f32 : bf16_to_f32;
      x = decode(g[i]);
      y = decode(c[i]);
    }}
    else {{ x = double(g[i]); y = double(c[i]); }}
    double tol = dt == "bf16" || dt == "f16" ? 1e-2 : dt == "f32" ? 1e-5 : dt == "f64" ? 1e-12 : 0;
    bool same = std::abs(x - y) <= tol * (1 + std::abs(y)) || (std::isnan(x) && std::isnan(y));
    if (!same && bad++ < 5) std::printf("%s[%zu]: gpu %g, cpu %g\\n", what, i, x, y);
  }}
  std::printf("%s: %zu elements, %zu written, %d differ\\n", what, g.size(), written, bad);
  return bad;
}}
{chr(10).join(f"static std::vector<{CTYPES[dt]}> g{i}, c{i}, o{i};" for i, (dt, _, _, _) in enumerate(args))}
{"".join(f'static void gpu_kernel{suffix}(void*) {{ {fn}{suffix}({", ".join(gpu_args)}); }}{chr(10)}'
         for suffix in suffixes)}static void (*const gpu_kernels[])(void*) = {{{", ".join(f"gpu_kernel{suffix}" for suffix in suffixes)}}};
int main() {{
  {chr(10).join(setup)}
  {regions}emu_run({threads}, {cluster}, {g0 * ctas}, {g1}, gpu_kernels, nullptr);
  for (int y = 0; y < {g1}; ++y)
    for (int x = 0; x < {g0}; ++x) cpu_{fn}({", ".join(cpu_args)}, x, y, 0, {g0}, {g1}, 1);
  int bad = 0;
  {chr(10).join(checks)}
  std::printf("{fn}: T=%d%s%s%s%s %s\\n", {threads}, "{f' S={ctas}' if ctas > 1 else ''}",
              "{f' K={cluster}' if cluster > 1 else ''}", "{f' MMA={mma}' if mma else f' ATTN={attention}' if attention else ''}",
              "{f' dynamic shared {dynamic.group(1)}' if dynamic else ''}", bad ? "MISMATCH" : "OK");
  return bad != 0;
}}
"""
    src = os.path.join(a.work, "harness.cpp")
    exe = os.path.join(a.work, "harness")
    open(src, "w").write(harness)
    run([a.cxx, "-std=c++20", "-O1", src] + gpu_objs + [cpu_obj, runtime_object(a.cxx, a.work), "-o", exe,
         "-lpthread", "-lm"])
    result = subprocess.run([exe], capture_output=True, text=True)
    sys.stdout.write(result.stdout)
    sys.exit(result.returncode)


if __name__ == "__main__":
    main()

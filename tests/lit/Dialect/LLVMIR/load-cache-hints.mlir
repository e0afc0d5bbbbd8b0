// RUN: tessera-opt %s -split-input-file -llvm-load-cache-hints | FileCheck %s
// RUN: tessera-opt %s -split-input-file -llvm-load-cache-hints=policy=evict_first | FileCheck %s --check-prefix=FIRST
// RUN: tessera-opt %s -split-input-file -llvm-load-cache-hints=reduction-policy=none | FileCheck %s --check-prefix=NONE

// A kernel reading %a (through its memref descriptor) and writing %o: the
// 16-byte load from %a becomes ld.global.nc with the policy made once at the
// entry; the 4-byte load from %a too; the 2-byte load stays; the load from
// the output (which the kernel stores through) stays. The read-only
// parameters are marked noalias and readonly, the output is not.
// CHECK-LABEL: llvm.func @kernel(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %{{.*}}: i64)
// CHECK: %[[POL:.*]] = llvm.inline_asm "createpolicy.fractional.L2::evict_last.b64 $0, 1.0;", "=l"  : () -> i64
// CHECK: %[[V:.*]] = llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;", "=r,=r,=r,=r,l,l" %{{.*}}, %[[POL]] : (!llvm.ptr, i64) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK: llvm.extractvalue %[[V]][3]
// CHECK: llvm.bitcast %{{.*}} : vector<4xi32> to vector<8xbf16>
// CHECK-NOT: llvm.load %{{.*}} -> vector<8xbf16>
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.b32 $0, [$1], $2;", "=r,l,l"
// CHECK: llvm.bitcast %{{.*}} : i32 to f32
// CHECK: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr -> bf16
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// FIRST: createpolicy.fractional.L2::evict_first.b64
!desc = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
llvm.func @kernel(%o: !llvm.ptr, %a0: !llvm.ptr, %a1: !llvm.ptr, %i: i64) attributes {tile.kernel} {
  %u = llvm.mlir.undef : !desc
  %d0 = llvm.insertvalue %a0, %u[0] : !desc
  %d1 = llvm.insertvalue %a1, %d0[1] : !desc
  %base = llvm.extractvalue %d1[1] : !desc
  %p = llvm.getelementptr %base[%i] : (!llvm.ptr, i64) -> !llvm.ptr, bf16
  %v = llvm.load %p {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
  %f = llvm.load %p {alignment = 4 : i64} : !llvm.ptr -> f32
  %h = llvm.load %p {alignment = 2 : i64} : !llvm.ptr -> bf16
  %q = llvm.getelementptr %o[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %w = llvm.load %q {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  llvm.store %w, %q {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
  llvm.return
}

// -----

// A store to shared memory whose address went through ptrtoint and inttoptr
// (a scratch array's aligned pointer) writes no parameter: the load is hinted.
// CHECK-LABEL: llvm.func @shared_scratch_store
// CHECK: llvm.inline_asm "createpolicy.fractional.L2::evict_last.b64
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32
llvm.func @shared_scratch_store(%out: !llvm.ptr, %a: !llvm.ptr, %off: i64) attributes {tile.kernel} {
  %v = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %base = llvm.inttoptr %off : i64 to !llvm.ptr<3>
  llvm.store %v, %base {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<3>
  llvm.store %v, %out {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
  llvm.return
}

// -----

// A kernel marked tile.reduction (convert-tile-to-loops: its programs store an
// eighth of what they load or less): its loads whose address depends on a CTA
// id (the row each program reads for itself, in the loop through a block
// argument) take the reduction policy, evict_first by default; its load of
// data every program reads alike (%w, at a fixed address) stays plain. Its
// read-only parameters are marked. With reduction-policy=none every load
// stays plain.
// CHECK-LABEL: llvm.func @reduction(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly})
// CHECK: %[[RPOL:.*]] = llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l"
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;", "=r,=r,=r,=r,l,l" %{{.*}}, %[[RPOL]]
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
// CHECK: ^bb1(
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;", "=r,=r,=r,=r,l,l" %{{.*}}, %[[RPOL]]
// CHECK: llvm.return
// NONE-LABEL: llvm.func @reduction
// NONE-NOT: inline_asm
// NONE: llvm.return
llvm.func @reduction(%out: !llvm.ptr, %a: !llvm.ptr, %w: !llvm.ptr) attributes {tile.kernel, tile.reduction} {
  %pid = nvvm.read.ptx.sreg.ctaid.x : i32
  %row = llvm.sext %pid : i32 to i64
  %c64 = llvm.mlir.constant(64 : i64) : i64
  %off = llvm.mul %row, %c64 : i64
  %p0 = llvm.getelementptr %a[%off] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %v0 = llvm.load %p0 {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %g = llvm.load %w {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %s0 = llvm.fmul %v0, %g : vector<4xf32>
  %c4 = llvm.mlir.constant(4 : i64) : i64
  llvm.br ^bb1(%off, %c4, %s0 : i64, i64, vector<4xf32>)
^bb1(%base: i64, %j: i64, %acc: vector<4xf32>):
  %i = llvm.add %base, %j : i64
  %pj = llvm.getelementptr %a[%i] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %vj = llvm.load %pj {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %acc1 = llvm.fadd %acc, %vj : vector<4xf32>
  %j1 = llvm.add %j, %c4 : i64
  %done = llvm.icmp "sge" %j1, %c64 : i64
  llvm.cond_br %done, ^bb2, ^bb1(%base, %j1, %acc1 : i64, i64, vector<4xf32>)
^bb2:
  %zero = llvm.mlir.constant(0 : i64) : i64
  %s = llvm.extractelement %acc1[%zero : i64] : vector<4xf32>
  llvm.store %s, %out {alignment = 4 : i64} : f32, !llvm.ptr
  llvm.return
}

// A reduction whose loads do not depend on a CTA id (every program reads the
// same data) keeps plain loads, without a policy.
// CHECK-LABEL: llvm.func @reduction_of_shared_data(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly})
// CHECK-NOT: inline_asm
// CHECK: llvm.return
llvm.func @reduction_of_shared_data(%out: !llvm.ptr, %a: !llvm.ptr) attributes {tile.kernel, tile.reduction} {
  %v0 = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %p1 = llvm.getelementptr %a[4] : (!llvm.ptr) -> !llvm.ptr, f32
  %v1 = llvm.load %p1 {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %sum = llvm.fadd %v0, %v1 : vector<4xf32>
  %zero = llvm.mlir.constant(0 : i64) : i64
  %s = llvm.extractelement %sum[%zero : i64] : vector<4xf32>
  llvm.store %s, %out {alignment = 4 : i64} : f32, !llvm.ptr
  llvm.return
}

// A reduction shaped like a matrix product: its left operand's address
// depends on ctaid.x, its right operand's on ctaid.y, so a row or a column of
// programs reads each; neither is a stream and both stay plain.
// CHECK-LABEL: llvm.func @matrix_product_operands(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly})
// CHECK-NOT: inline_asm
// CHECK: llvm.return
llvm.func @matrix_product_operands(%out: !llvm.ptr, %a: !llvm.ptr, %b: !llvm.ptr) attributes {tile.kernel, tile.reduction} {
  %x = nvvm.read.ptx.sreg.ctaid.x : i32
  %y = nvvm.read.ptx.sreg.ctaid.y : i32
  %xi = llvm.zext %x : i32 to i64
  %yi = llvm.zext %y : i32 to i64
  %pa = llvm.getelementptr %a[%xi] : (!llvm.ptr, i64) -> !llvm.ptr, vector<4xf32>
  %pb = llvm.getelementptr %b[%yi] : (!llvm.ptr, i64) -> !llvm.ptr, vector<4xf32>
  %va = llvm.load %pa {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %vb = llvm.load %pb {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %p = llvm.fmul %va, %vb : vector<4xf32>
  %xy = llvm.add %xi, %yi : i64
  %po = llvm.getelementptr %out[%xy] : (!llvm.ptr, i64) -> !llvm.ptr, vector<4xf32>
  llvm.store %p, %po {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
  llvm.return
}

// The same kernel without the mark: what one thread stores says nothing about
// the program (its other threads may store the rest), so its loads are hinted.
// CHECK-LABEL: llvm.func @unmarked_small_store
// CHECK: llvm.inline_asm "createpolicy.fractional.L2::evict_last.b64
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32
llvm.func @unmarked_small_store(%out: !llvm.ptr, %a: !llvm.ptr) attributes {tile.kernel} {
  %v0 = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %p1 = llvm.getelementptr %a[4] : (!llvm.ptr) -> !llvm.ptr, f32
  %v1 = llvm.load %p1 {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %sum = llvm.fadd %v0, %v1 : vector<4xf32>
  %zero = llvm.mlir.constant(0 : i64) : i64
  %s = llvm.extractelement %sum[%zero : i64] : vector<4xf32>
  llvm.store %s, %out {alignment = 4 : i64} : f32, !llvm.ptr
  llvm.return
}

// -----

// Kernels left alone: one that stores through a pointer the pass cannot trace
// (a pointer loaded from memory), one that calls a function, one with an
// under-aligned load, and a function that is not a tile kernel.
// CHECK-LABEL: llvm.func @untraced_store
// CHECK-NOT: inline_asm
// CHECK: llvm.return
llvm.func @untraced_store(%pp: !llvm.ptr, %a: !llvm.ptr) attributes {tile.kernel} {
  %v = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %p = llvm.load %pp {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
  llvm.store %v, %p {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
  llvm.return
}
llvm.func @callee(!llvm.ptr)
// CHECK-LABEL: llvm.func @calls
// CHECK-NOT: inline_asm
// CHECK: llvm.return
llvm.func @calls(%a: !llvm.ptr) attributes {tile.kernel} {
  %v = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  llvm.call @callee(%a) : (!llvm.ptr) -> ()
  llvm.return
}
// CHECK-LABEL: llvm.func @under_aligned
// CHECK-NOT: inline_asm
// CHECK: llvm.return
llvm.func @under_aligned(%a: !llvm.ptr) attributes {tile.kernel} {
  %v = llvm.load %a {alignment = 4 : i64} : !llvm.ptr -> vector<4xf32>
  llvm.return
}
// CHECK-LABEL: llvm.func @not_a_kernel
// CHECK-NOT: inline_asm
// CHECK: llvm.return
llvm.func @not_a_kernel(%a: !llvm.ptr) {
  %v = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  llvm.return
}

// -----

// A masked store writes through its pointer: the parameter it traces to is
// not read-only, its loads stay plain.
// CHECK-LABEL: llvm.func @masked_store
// CHECK-NOT: inline_asm
// CHECK: llvm.intr.masked.store
llvm.func @masked_store(%a: !llvm.ptr, %m: vector<4xi1>) attributes {tile.kernel} {
  %v = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  llvm.intr.masked.store %v, %a, %m {alignment = 16 : i32} : vector<4xf32>, vector<4xi1> into !llvm.ptr
  llvm.return
}

// -----

// Descriptors passed between blocks (the two versions of a loop that
// tile-version-interior makes join in a block whose arguments are the
// descriptors of private tiles): a store through a block argument whose
// incoming values all trace to private memory, around a loop too, writes no
// parameter, so the load from %a is hinted. A store through a block argument
// that is private memory on one path and %a on the other makes %a written:
// its load stays plain.
// CHECK-LABEL: llvm.func @descriptor_through_blocks(%{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %{{.*}}: i1)
// CHECK: llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32
!desc = !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
llvm.func @descriptor_through_blocks(%a: !llvm.ptr, %c: i1) attributes {tile.kernel} {
  %one = llvm.mlir.constant(1 : i64) : i64
  %u = llvm.mlir.undef : !desc
  %m0 = llvm.alloca %one x f32 : (i64) -> !llvm.ptr
  %m1 = llvm.alloca %one x f32 : (i64) -> !llvm.ptr
  %d0 = llvm.insertvalue %m0, %u[1] : !desc
  %d1 = llvm.insertvalue %m1, %u[1] : !desc
  llvm.cond_br %c, ^first, ^second
^first:
  llvm.br ^join(%d0 : !desc)
^second:
  llvm.br ^join(%d1 : !desc)
^join(%d: !desc):
  %v = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  llvm.br ^loop(%d : !desc)
^loop(%l: !desc):
  %p = llvm.extractvalue %l[1] : !desc
  %x = llvm.extractelement %v[%one : i64] : vector<4xf32>
  llvm.store %x, %p {alignment = 4 : i64} : f32, !llvm.ptr
  llvm.cond_br %c, ^loop(%l : !desc), ^end
^end:
  llvm.return
}
// CHECK-LABEL: llvm.func @descriptors_disagree(%{{.*}}: !llvm.ptr, %{{.*}}: i1)
// CHECK-NOT: inline_asm
// CHECK: llvm.return
llvm.func @descriptors_disagree(%a: !llvm.ptr, %c: i1) attributes {tile.kernel} {
  %one = llvm.mlir.constant(1 : i64) : i64
  %u = llvm.mlir.undef : !desc
  %m0 = llvm.alloca %one x f32 : (i64) -> !llvm.ptr
  %d0 = llvm.insertvalue %m0, %u[1] : !desc
  %d1 = llvm.insertvalue %a, %u[1] : !desc
  llvm.cond_br %c, ^first, ^second
^first:
  llvm.br ^join(%d0 : !desc)
^second:
  llvm.br ^join(%d1 : !desc)
^join(%d: !desc):
  %v = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %p = llvm.extractvalue %d[1] : !desc
  %x = llvm.extractelement %v[%one : i64] : vector<4xf32>
  llvm.store %x, %p {alignment = 4 : i64} : f32, !llvm.ptr
  llvm.return
}

// -----

// The kernel's own grid dependency wait (tile.grid_dependency_wait's inline
// asm) writes nothing: the loads before and after it are hinted. Any other
// side-effecting inline asm may write anything: that kernel is left alone.
// CHECK-LABEL: llvm.func @own_grid_wait(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias, llvm.readonly})
// CHECK: createpolicy
// CHECK: ld.global.nc.L2::cache_hint.v4.b32
// CHECK: llvm.inline_asm has_side_effects "griddepcontrol.wait;"
// CHECK: ld.global.nc.L2::cache_hint.v4.b32
// CHECK-LABEL: llvm.func @other_asm
// CHECK-NOT: ld.global.nc
// CHECK: llvm.return
llvm.func @own_grid_wait(%o: !llvm.ptr, %a: !llvm.ptr) attributes {tile.kernel} {
  %v = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}" : () -> ()
  %p = llvm.getelementptr %a[4] : (!llvm.ptr) -> !llvm.ptr, f32
  %w = llvm.load %p {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  %s = llvm.fadd %v, %w : vector<4xf32>
  llvm.store %s, %o {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
  llvm.return
}
llvm.func @other_asm(%o: !llvm.ptr, %a: !llvm.ptr) attributes {tile.kernel} {
  %v = llvm.load %a {alignment = 16 : i64} : !llvm.ptr -> vector<4xf32>
  llvm.inline_asm has_side_effects "membar.gl;", "~{memory}" : () -> ()
  llvm.store %v, %o {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr
  llvm.return
}

// RUN: tessera-opt %s -convert-math-to-nvvm | FileCheck %s

// Ops marked afn (the DSL's fast_exp, fast_sqrt, fast_tanh, fast_div) take the
// hardware approximations; the same ops without the flag keep their accurate
// forms (exp's correction, IEEE sqrt and division).

// CHECK-LABEL: func.func @fast_exp
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[LOG2E:.*]] = arith.constant 1.44269502 : f32
// CHECK: %[[T:.*]] = arith.mulf %[[X]], %[[LOG2E]] : f32
// CHECK: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[T]]) : (f32) -> f32
// CHECK-NEXT: return %[[R]]
func.func @fast_exp(%x: f32) -> f32 {
  %0 = math.exp %x fastmath<afn> : f32
  return %0 : f32
}

// CHECK-LABEL: func.func @fast_sqrt_tanh_div
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f32)
// CHECK: %[[S:.*]] = llvm.call_intrinsic "llvm.nvvm.sqrt.approx.f"(%[[X]]) : (f32) -> f32
// CHECK: %[[T:.*]] = llvm.inline_asm "tanh.approx.f32 $0, $1;", "=f,f" %[[S]] : (f32) -> f32
// CHECK: %[[D:.*]] = llvm.call_intrinsic "llvm.nvvm.div.full"(%[[T]], %[[Y]]) : (f32, f32) -> f32
// CHECK: return %[[D]]
func.func @fast_sqrt_tanh_div(%x: f32, %y: f32) -> f32 {
  %0 = math.sqrt %x fastmath<afn> : f32
  %1 = math.tanh %0 fastmath<afn> : f32
  %2 = arith.divf %1, %y fastmath<afn> : f32
  return %2 : f32
}

// bf16 operands are computed in f32 and rounded back.
// CHECK-LABEL: func.func @fast_exp_bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @fast_exp_bf16(%x: bf16) -> bf16 {
  %0 = math.exp %x fastmath<afn> : bf16
  return %0 : bf16
}

// Without afn: the accurate forms stay (sqrt and divf are left to LLVM).
// CHECK-LABEL: func.func @accurate
// CHECK-NOT: approx
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK-NOT: approx
func.func @accurate(%x: f32, %y: f32) -> f32 {
  %0 = math.sqrt %x : f32
  %1 = arith.divf %0, %y : f32
  return %1 : f32
}

// f64 division and sqrt marked afn have no approximation here: left to LLVM.
// CHECK-LABEL: func.func @f64_left_alone
// CHECK: math.sqrt %{{.*}} fastmath<afn> : f64
// CHECK: arith.divf %{{.*}} fastmath<afn> : f64
func.func @f64_left_alone(%x: f64, %y: f64) -> f64 {
  %0 = math.sqrt %x fastmath<afn> : f64
  %1 = arith.divf %0, %y fastmath<afn> : f64
  return %1 : f64
}

; RUN: not tessera-llvm-opt %s -passes=tessera-define-bf16-truncation 2>&1 | FileCheck %s
; RUN: not tessera-llvm-opt %s -passes='tessera-define-bf16-truncation<kernel=k>' 2>&1 | FileCheck %s --check-prefix=PARAM

; CHECK: error: tessera-define-bf16-truncation: '__truncsfbf2' has type i16 (float), expected bfloat (float)
; PARAM: error: tessera-define-bf16-truncation: unknown parameter 'kernel'
declare i16 @__truncsfbf2(float)

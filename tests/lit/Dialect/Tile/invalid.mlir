// RUN: tessera-opt %s -split-input-file -verify-diagnostics

func.func @program_id_dim(%x: i32) {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint}}
  %0 = tile.program_id 3
  return
}

// -----

func.func @num_programs_dim() {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint}}
  %0 = tile.num_programs -1
  return
}

// -----

func.func @load_padding_inf_integer(%src: memref<?xi32>, %i: i32) {
  // expected-error @+1 {{padding -inf is not a value of the element type 'i32'}}
  %0 = tile.load %src[%i] padding = -inf : memref<?xi32> -> tensor<64xi32>
  return
}

// -----

func.func @load_padding_nan_integer(%src: memref<?xi32>, %i: i32) {
  // expected-error @+1 {{padding nan is not a value of the element type 'i32'}}
  %0 = tile.load %src[%i] padding = nan : memref<?xi32> -> tensor<64xi32>
  return
}

// -----

func.func @load_padding_fraction_integer(%src: memref<?xi32>, %i: i32) {
  // expected-error @+1 {{padding 0.5 is not a value of the element type 'i32'}}
  %0 = tile.load %src[%i] padding = 0.5 : memref<?xi32> -> tensor<64xi32>
  return
}

// -----

func.func @load_padding_integer_range(%src: memref<?xi32>, %i: i32) {
  // expected-error @+1 {{padding 2147483648 is not a value of the element type 'i32'}}
  %0 = tile.load %src[%i] padding = 2147483648 : memref<?xi32> -> tensor<64xi32>
  return
}

// -----

func.func @load_padding_i1(%src: memref<?xi1>, %i: i32) {
  // expected-error @+1 {{padding 2 is not a value of the element type 'i1'}}
  %0 = tile.load %src[%i] padding = 2 : memref<?xi1> -> tensor<64xi1>
  return
}

// -----

func.func @load_padding_f16_range(%src: memref<?xf16>, %i: i32) {
  // expected-error @+1 {{padding 1.0e+05 is not a value of the element type 'f16'}}
  %0 = tile.load %src[%i] padding = 100000.0 : memref<?xf16> -> tensor<64xf16>
  return
}

// -----

func.func @load_padding_f32_range(%src: memref<?xf32>, %i: i32) {
  // expected-error @+1 {{padding -1.0e+300 is not a value of the element type 'f32'}}
  %0 = tile.load %src[%i] padding = -1.0e300 : memref<?xf32> -> tensor<64xf32>
  return
}

// -----

func.func @load_padding_type(%src: memref<?xf32>, %i: i32) {
  // expected-error @+1 {{attribute 'padding' failed to satisfy constraint: 64-bit float attribute}}
  %0 = "tile.load"(%src, %i) <{padding = 1.0 : f32}> : (memref<?xf32>, i32) -> tensor<64xf32>
  return
}

// -----

func.func @load_padding_syntax(%src: memref<?xf32>, %i: i32) {
  // expected-error @+1 {{expected floating point literal}}
  %0 = tile.load %src[%i] padding = neg_inf : memref<?xf32> -> tensor<64xf32>
  return
}

// -----

func.func @load_num_indices(%src: memref<?x?xf32, strided<[?, ?], offset: ?>>, %i: i32) {
  // expected-error @+1 {{expected 2 tile indices (one per memref dimension), got 1}}
  %0 = tile.load %src[%i] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<64x64xf32>
  return
}

// -----

func.func @load_rank(%src: memref<?x?xf32, strided<[?, ?], offset: ?>>, %i: i32) {
  // expected-error @+1 {{tile rank 1 does not match memref rank 2}}
  %0 = tile.load %src[%i, %i] : memref<?x?xf32, strided<[?, ?], offset: ?>> -> tensor<64xf32>
  return
}

// -----

func.func @load_memref_rank(%src: memref<?x?x?x?x?xf32>, %i: i32) {
  // expected-error @+1 {{global tensor must have rank 1 to 4, got 5}}
  %0 = tile.load %src[%i, %i, %i, %i, %i] : memref<?x?x?x?x?xf32> -> tensor<2x2x2x2x2xf32>
  return
}

// -----

func.func @load_element_type(%src: memref<?xf32>, %i: i32) {
  // expected-error @+1 {{tile element type 'f16' does not match memref element type 'f32'}}
  %0 = tile.load %src[%i] : memref<?xf32> -> tensor<64xf16>
  return
}

// -----

func.func @load_pow2(%src: memref<?xf32>, %i: i32) {
  // expected-error @+1 {{tile 'tensor<48xf32>' must have static power-of-two dimensions}}
  %0 = tile.load %src[%i] : memref<?xf32> -> tensor<48xf32>
  return
}

// -----

func.func @load_index_type(%src: memref<?xf32>, %i: index) {
  // expected-error @+1 {{operand #1 must be variadic of 32-bit signless integer}}
  %0 = "tile.load"(%src, %i) : (memref<?xf32>, index) -> tensor<64xf32>
  return
}

// -----

func.func @store_num_indices(%v: tensor<64x64xf32>, %dst: memref<?x?xf32>, %i: i32) {
  // expected-error @+1 {{expected 2 tile indices (one per memref dimension), got 3}}
  tile.store %v, %dst[%i, %i, %i] : tensor<64x64xf32>, memref<?x?xf32>
  return
}

// -----

func.func @store_rank(%v: tensor<64xf32>, %dst: memref<?x?xf32>, %i: i32) {
  // expected-error @+1 {{tile rank 1 does not match memref rank 2}}
  tile.store %v, %dst[%i, %i] : tensor<64xf32>, memref<?x?xf32>
  return
}

// -----

func.func @store_element_type(%v: tensor<64xi32>, %dst: memref<?xf32>, %i: i32) {
  // expected-error @+1 {{tile element type 'i32' does not match memref element type 'f32'}}
  tile.store %v, %dst[%i] : tensor<64xi32>, memref<?xf32>
  return
}

// -----

func.func @store_pow2(%v: tensor<3x64xf32>, %dst: memref<?x?xf32>, %i: i32) {
  // expected-error @+1 {{must have static power-of-two dimensions}}
  tile.store %v, %dst[%i, %i] : tensor<3x64xf32>, memref<?x?xf32>
  return
}

// -----

func.func @splat_type(%s: f16) {
  // expected-error @+1 {{scalar type 'f16' does not match tile element type 'f32'}}
  %0 = tile.splat %s : f16 -> tensor<64xf32>
  return
}

// -----

func.func @splat_pow2(%s: f32) {
  // expected-error @+1 {{result 'tensor<6xf32>' must have static power-of-two dimensions}}
  %0 = tile.splat %s : f32 -> tensor<6xf32>
  return
}

// -----

func.func @broadcast_rank(%x: tensor<64xf32>) {
  // expected-error @+1 {{operand rank 1 differs from result rank 2}}
  %0 = tile.broadcast %x : tensor<64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @broadcast_dim(%x: tensor<2x64xf32>) {
  // expected-error @+1 {{operand dimension 0 (2) must be 1 or equal the result dimension (64)}}
  %0 = tile.broadcast %x : tensor<2x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @broadcast_type(%x: tensor<1x64xf32>) {
  // expected-error @+1 {{operand and result element types differ}}
  %0 = tile.broadcast %x : tensor<1x64xf32> -> tensor<64x64xf16>
  return
}

// -----

func.func @reshape_count(%x: tensor<64x64xf32>) {
  // expected-error @+1 {{operand has 4096 elements but result has 2048}}
  %0 = tile.reshape %x : tensor<64x64xf32> -> tensor<2048xf32>
  return
}

// -----

func.func @reshape_type(%x: tensor<64x64xf32>) {
  // expected-error @+1 {{operand and result element types differ}}
  %0 = tile.reshape %x : tensor<64x64xf32> -> tensor<4096xi32>
  return
}

// -----

func.func @transpose_rank(%x: tensor<64xf32>) {
  // expected-error @+1 {{operand and result must have rank 2}}
  %0 = tile.transpose %x : tensor<64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @transpose_shape(%x: tensor<64x32xf32>) {
  // expected-error @+1 {{result type 'tensor<64x32xf32>' is not the transpose of 'tensor<64x32xf32>'}}
  %0 = tile.transpose %x : tensor<64x32xf32> -> tensor<64x32xf32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<64x64xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %0 = tile.reduce %x {kind = sum, axis = 2} : tensor<64x64xf32> -> tensor<64x1xf32>
  return
}

// -----

func.func @reduce_shape(%x: tensor<64x64xf32>) {
  // expected-error @+1 {{result shape must equal the operand shape with dimension 1 set to 1}}
  %0 = tile.reduce %x {kind = max, axis = 1} : tensor<64x64xf32> -> tensor<64xf32>
  return
}

// -----

func.func @reduce_type(%x: tensor<64x64xf16>) {
  // expected-error @+1 {{operand and result element types differ}}
  %0 = tile.reduce %x {kind = sum, axis = 0} : tensor<64x64xf16> -> tensor<1x64xf32>
  return
}

// -----

func.func @reduce_kind(%x: tensor<64x64xf32>) {
  // expected-error @+1 {{expected}}
  %0 = tile.reduce %x {kind = prod, axis = 0} : tensor<64x64xf32> -> tensor<1x64xf32>
  return
}

// -----

func.func @iota_type() {
  // expected-error @+1 {{result #0 must be 1D tensor of 32-bit signless integer values}}
  %0 = tile.iota : tensor<128xf32>
  return
}

// -----

func.func @iota_pow2() {
  // expected-error @+1 {{must have static power-of-two dimensions}}
  %0 = tile.iota : tensor<100xi32>
  return
}

// -----

func.func @mma_k(%a: tensor<64x32xf16>, %b: tensor<16x64xf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{K mismatch: lhs is 64x32 but rhs is 16x64}}
  %0 = tile.mma %a, %b, %c : tensor<64x32xf16>, tensor<16x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_m(%a: tensor<32x32xf16>, %b: tensor<32x64xf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{M mismatch: lhs has 32 rows but accumulator has 64}}
  %0 = tile.mma %a, %b, %c : tensor<32x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_n(%a: tensor<64x32xf16>, %b: tensor<32x32xf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{N mismatch: rhs has 32 columns but accumulator has 64}}
  %0 = tile.mma %a, %b, %c : tensor<64x32xf16>, tensor<32x32xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_elt(%a: tensor<64x32xi8>, %b: tensor<32x64xi8>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{operand element type must be f16, bf16, f32, f8E4M3FN or f8E5M2, got 'i8'}}
  %0 = tile.mma %a, %b, %c : tensor<64x32xi8>, tensor<32x64xi8>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_mixed(%a: tensor<64x32xf16>, %b: tensor<32x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{lhs and rhs element types differ}}
  %0 = tile.mma %a, %b, %c : tensor<64x32xf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

// Only the two 8-bit float formats may meet.
func.func @mma_mixed_f8_bf16(%a: tensor<64x32xf8E4M3FN>, %b: tensor<32x64xbf16>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{lhs and rhs element types differ}}
  %0 = tile.mma %a, %b, %c : tensor<64x32xf8E4M3FN>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @mma_acc(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>, %c: tensor<64x64xf16>) {
  // expected-error @+1 {{accumulator element type must be f32}}
  %0 = tile.mma %a, %b, %c : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf16> -> tensor<64x64xf16>
  return
}

// -----

func.func @mma_rank(%a: tensor<64xf32>, %b: tensor<32x64xf32>, %c: tensor<64x64xf32>) {
  // expected-error @+1 {{lhs must have rank 2}}
  %0 = tile.mma %a, %b, %c : tensor<64xf32>, tensor<32x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @device_call_shape(%x: tensor<128xf32>, %y: tensor<64xf32>) {
  // expected-error @+1 {{argument 1 has shape 'tensor<64xf32>' but the result is 'tensor<128xf32>'}}
  %0 = tile.device_call @f(%x, %y) : (tensor<128xf32>, tensor<64xf32>) -> tensor<128xf32>
  return
}

// -----

func.func @device_call_type(%x: tensor<128xf16>) {
  // expected-error @+1 {{argument 0 elements must be f32 or i32, got 'f16'}}
  %0 = tile.device_call @f(%x) : (tensor<128xf16>) -> tensor<128xf32>
  return
}

// -----

func.func @device_call_no_args() {
  // expected-error @+1 {{needs at least one argument}}
  %0 = tile.device_call @f() : () -> tensor<128xf32>
  return
}

// -----

func.func @stream_outside_kernel() {
  // expected-error @+1 {{must be inside a tile kernel}}
  tile.stream_commit
  return
}

// -----

func.func @stream_one_slot() attributes {tile.kernel} {
  // expected-error @+1 {{must be a static memref of at least 2 slots}}
  %ring = tile.stream_buffer : memref<1x16x512xbf16>
  return
}

// -----

func.func @stream_slot_shape() attributes {tile.kernel} {
  // expected-error @+1 {{ring slot 'tensor<16x500xbf16>' must have static power-of-two dimensions}}
  %ring = tile.stream_buffer : memref<2x16x500xbf16>
  return
}

// -----

func.func @stream_i1() attributes {tile.kernel} {
  // expected-error @+1 {{ring element type 'i1' must be a whole number of bytes}}
  %ring = tile.stream_buffer : memref<2x16x512xi1>
  return
}

// -----

func.func @stream_copy_type(%w: memref<?x?xf32, strided<[?, 1], offset: ?>>, %i: i32, %s: index, %v: i1)
    attributes {tile.kernel} {
  %ring = tile.stream_buffer : memref<2x16x512xbf16>
  // expected-error @+1 {{tile element type 'bf16' does not match memref element type 'f32'}}
  tile.stream_copy %w[%i, %i] to %ring[%s] if %v : memref<?x?xf32, strided<[?, 1], offset: ?>>, memref<2x16x512xbf16>
  return
}

// -----

func.func @stream_take_type(%s: index) attributes {tile.kernel} {
  %ring = tile.stream_buffer : memref<2x16x512xbf16>
  // expected-error @+1 {{result type 'tensor<16x256xbf16>' must be the ring's slot type 'tensor<16x512xbf16>'}}
  %t = tile.stream_take %ring[%s] : memref<2x16x512xbf16> -> tensor<16x256xbf16>
  return
}

// -----

func.func @stream_bulk_copy_round(%w: memref<?x?xbf16, strided<[?, 1], offset: ?>>, %i: i32, %s: index, %v: i1)
    attributes {tile.kernel} {
  %ring = tile.stream_buffer bulk : memref<2x16x512xbf16>
  // expected-error @+1 {{into a bulk ring needs a round}}
  tile.stream_copy %w[%i, %i] to %ring[%s] if %v : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<2x16x512xbf16>
  return
}

// -----

func.func @stream_copy_round(%w: memref<?x?xbf16, strided<[?, 1], offset: ?>>, %i: i32, %s: index, %v: i1)
    attributes {tile.kernel} {
  %ring = tile.stream_buffer : memref<2x16x512xbf16>
  // expected-error @+1 {{takes a round only into a bulk ring}}
  tile.stream_copy %w[%i, %i] to %ring[%s] if %v round %s : memref<?x?xbf16, strided<[?, 1], offset: ?>>, memref<2x16x512xbf16>
  return
}

// -----

func.func @stream_ready_bulk(%s: index) attributes {tile.kernel} {
  %ring = tile.stream_buffer : memref<2x16x512xbf16>
  // expected-error @+1 {{needs a bulk tile.stream_buffer}}
  tile.stream_ready %ring[%s] round %s : memref<2x16x512xbf16>
  return
}

// -----

func.func @stream_release_bulk(%s: index) attributes {tile.kernel} {
  %ring = tile.stream_buffer : memref<2x16x512xbf16>
  // expected-error @+1 {{needs a bulk tile.stream_buffer}}
  tile.stream_release %ring[%s] : memref<2x16x512xbf16>
  return
}

// -----

func.func @grid_wait_nested(%v: i1) attributes {tile.kernel} {
  scf.if %v {
    // expected-error @+1 {{must be in the kernel's entry block}}
    tile.grid_dependency_wait
  }
  return
}

// -----

// Before the wait only settled (frozen) tensors may be read: the vector %x is
// one a kernel still running may write.
func.func @grid_wait_after_unsettled_load(%w: memref<?x?xbf16> {tile.settled}, %x: memref<?xf32>)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %wt = tile.load %w[%c0, %c0] : memref<?x?xbf16> -> tensor<16x512xbf16>
  // expected-error @+1 {{reads a tensor before the grid dependency wait that is not a kernel argument marked 'tile.settled'}}
  %xt = tile.load %x[%c0] : memref<?xf32> -> tensor<512xf32>
  // expected-error @+1 {{follows a read of a tensor that a kernel still running may write}}
  tile.grid_dependency_wait
  return
}

// -----

// expected-error @+1 {{argument 0: attribute 'tile.settled' must be a unit attribute}}
func.func @settled_value(%w: memref<?xf32> {tile.settled = 1 : i64}) attributes {tile.kernel} {
  return
}

// -----

func.func @stream_wait_range() attributes {tile.kernel} {
  // expected-error @+1 {{attribute 'pending' failed to satisfy constraint}}
  tile.stream_wait 9
  return
}

// -----

func.func @split_rank_unsplit() attributes {tile.kernel} {
  // expected-error @+1 {{must be in a kernel marked 'tile.split_k'}}
  %r = tile.split_rank
  return
}

// -----

func.func @split_sum_in_loop(%a: tensor<16xf32>, %n: index) attributes {tile.kernel, tile.split_k = 2 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    // expected-error @+1 {{must not be inside 'scf.for': every CTA of a program reaches it once}}
    %s = tile.split_sum %a : tensor<16xf32> -> tensor<16xf32>
  }
  return
}

// -----

func.func @split_sum_bf16(%a: tensor<16xbf16>) attributes {tile.kernel, tile.split_k = 2 : i32} {
  // expected-error @+1 {{input element type 'bf16' must be f32}}
  %s = tile.split_sum %a : tensor<16xbf16> -> tensor<16xbf16>
  return
}

// -----

func.func @split_sum_types(%a: tensor<16xf32>) attributes {tile.kernel, tile.split_k = 2 : i32} {
  // expected-error @+1 {{needs at least one input, and results of the inputs' types}}
  %s = tile.split_sum %a : tensor<16xf32> -> tensor<32xf32>
  return
}

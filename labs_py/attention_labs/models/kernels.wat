;; The browser models' two hot loops, with WebAssembly's 128-bit SIMD (four float32 lanes):
;;   matmul_nt     y = x W^T, the product of every Linear layer (minilm.py, smollm2.py);
;;   dequant_q4_1  SmolLM2's 4-bit weights to float32 as they load (smollm2.py).
;;
;; matmul_nt:
;;   x [m, k], W [n, k] (as PyTorch's Linear stores it: [d_out, d_in]), y [m, n];
;;   all row-major float32;   y[i, j] = sum over p of x[i, p] * W[j, p]
;;
;; Pyodide's NumPy has no BLAS, and its einsum does one multiply-add at a time; f32x4 does
;; four. The module is a shared library as Emscripten's dlopen loads it (the dylink.0
;; section: no memory or table of its own), so it works in Pyodide's own memory:
;; wasm_kernels.py opens it with ctypes and passes the addresses of NumPy's arrays, which
;; are read and written where they are, with no copies.
;; It needs k % 4 == 0, k > 0 and n % 2 == 0 (wasm_kernels.py checks; NumPy does the rest).
;;
;; Blocks: 2 rows of W by 4 rows of x, eight running sums of four lanes each, every sum
;; summed across its lanes once at the end. W's two rows stay in the L1 cache while every
;; row of x passes (x's rows innermost), so W is read from memory once per product.
;; The sums run in another order than NumPy's: results agree to float32 rounding, not bits.
;;
;; dequant_q4_1: n blocks of 32 values, each from 16 bytes of codes (byte j: value j in its
;; low 4 bits, value j + 16 in its high 4 bits, ggml's layout) and one float32 scale and
;; minimum (NumPy widens the file's float16): value = code * scale + minimum, a float32
;; multiply then a float32 add, as gguf and transformers compute it: the same bits.
;;
;; Assembled to kernels.wasm, which is committed beside it and which the labs wheel carries:
;;   python -m build_scripts.assemble_kernels   (tests/python/test_wasm_kernels.py checks)
(module
  (@dylink.0 (mem-info (memory 0 0)))
  (import "env" "memory" (memory 0))

  ;; the four lanes of $v, summed
  (func $lanes (param $v v128) (result f32)
    (f32.add
      (f32.add (f32x4.extract_lane 0 (local.get $v)) (f32x4.extract_lane 1 (local.get $v)))
      (f32.add (f32x4.extract_lane 2 (local.get $v)) (f32x4.extract_lane 3 (local.get $v)))))

  (func (export "matmul_nt")
    (param $x i32) (param $w i32) (param $y i32) (param $m i32) (param $n i32) (param $k i32)
    (local $kb i32) (local $nb i32) ;; a row of x or W, a row of y: in bytes
    (local $i i32) (local $j i32) (local $p i32)
    (local $w0 i32) (local $w1 i32) (local $x0 i32) (local $x1 i32) (local $x2 i32) (local $x3 i32)
    (local $out i32)
    (local $b0 v128) (local $b1 v128) (local $v v128)
    (local $s00 v128) (local $s01 v128) (local $s10 v128) (local $s11 v128)
    (local $s20 v128) (local $s21 v128) (local $s30 v128) (local $s31 v128)
    (local.set $kb (i32.shl (local.get $k) (i32.const 2)))
    (local.set $nb (i32.shl (local.get $n) (i32.const 2)))
    (local.set $j (i32.const 0))
    (block $done_j
      (loop $next_j
        (br_if $done_j (i32.ge_u (local.get $j) (local.get $n)))
        ;; W's rows j and j + 1
        (local.set $w0 (i32.add (local.get $w) (i32.mul (local.get $j) (local.get $kb))))
        (local.set $w1 (i32.add (local.get $w0) (local.get $kb)))
        (local.set $i (i32.const 0))
        ;; x's rows i .. i + 3
        (block $done_4
          (loop $next_4
            (br_if $done_4 (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (local.get $m)))
            (local.set $x0 (i32.add (local.get $x) (i32.mul (local.get $i) (local.get $kb))))
            (local.set $x1 (i32.add (local.get $x0) (local.get $kb)))
            (local.set $x2 (i32.add (local.get $x1) (local.get $kb)))
            (local.set $x3 (i32.add (local.get $x2) (local.get $kb)))
            (local.set $s00 (v128.const i64x2 0 0))
            (local.set $s01 (v128.const i64x2 0 0))
            (local.set $s10 (v128.const i64x2 0 0))
            (local.set $s11 (v128.const i64x2 0 0))
            (local.set $s20 (v128.const i64x2 0 0))
            (local.set $s21 (v128.const i64x2 0 0))
            (local.set $s30 (v128.const i64x2 0 0))
            (local.set $s31 (v128.const i64x2 0 0))
            (local.set $p (i32.const 0))
            (loop $dot
              (local.set $b0 (v128.load (i32.add (local.get $w0) (local.get $p))))
              (local.set $b1 (v128.load (i32.add (local.get $w1) (local.get $p))))
              (local.set $v (v128.load (i32.add (local.get $x0) (local.get $p))))
              (local.set $s00 (f32x4.add (local.get $s00) (f32x4.mul (local.get $v) (local.get $b0))))
              (local.set $s01 (f32x4.add (local.get $s01) (f32x4.mul (local.get $v) (local.get $b1))))
              (local.set $v (v128.load (i32.add (local.get $x1) (local.get $p))))
              (local.set $s10 (f32x4.add (local.get $s10) (f32x4.mul (local.get $v) (local.get $b0))))
              (local.set $s11 (f32x4.add (local.get $s11) (f32x4.mul (local.get $v) (local.get $b1))))
              (local.set $v (v128.load (i32.add (local.get $x2) (local.get $p))))
              (local.set $s20 (f32x4.add (local.get $s20) (f32x4.mul (local.get $v) (local.get $b0))))
              (local.set $s21 (f32x4.add (local.get $s21) (f32x4.mul (local.get $v) (local.get $b1))))
              (local.set $v (v128.load (i32.add (local.get $x3) (local.get $p))))
              (local.set $s30 (f32x4.add (local.get $s30) (f32x4.mul (local.get $v) (local.get $b0))))
              (local.set $s31 (f32x4.add (local.get $s31) (f32x4.mul (local.get $v) (local.get $b1))))
              (local.set $p (i32.add (local.get $p) (i32.const 16)))
              (br_if $dot (i32.lt_u (local.get $p) (local.get $kb))))
            ;; y[i + r, j] and y[i + r, j + 1] for r = 0 .. 3
            (local.set $out
              (i32.add (local.get $y)
                (i32.add (i32.mul (local.get $i) (local.get $nb)) (i32.shl (local.get $j) (i32.const 2)))))
            (f32.store (local.get $out) (call $lanes (local.get $s00)))
            (f32.store offset=4 (local.get $out) (call $lanes (local.get $s01)))
            (local.set $out (i32.add (local.get $out) (local.get $nb)))
            (f32.store (local.get $out) (call $lanes (local.get $s10)))
            (f32.store offset=4 (local.get $out) (call $lanes (local.get $s11)))
            (local.set $out (i32.add (local.get $out) (local.get $nb)))
            (f32.store (local.get $out) (call $lanes (local.get $s20)))
            (f32.store offset=4 (local.get $out) (call $lanes (local.get $s21)))
            (local.set $out (i32.add (local.get $out) (local.get $nb)))
            (f32.store (local.get $out) (call $lanes (local.get $s30)))
            (f32.store offset=4 (local.get $out) (call $lanes (local.get $s31)))
            (local.set $i (i32.add (local.get $i) (i32.const 4)))
            (br $next_4)))
        ;; the last m % 4 rows of x, one at a time (all of them when m = 1: a decoder's step)
        (block $done_1
          (loop $next_1
            (br_if $done_1 (i32.ge_u (local.get $i) (local.get $m)))
            (local.set $x0 (i32.add (local.get $x) (i32.mul (local.get $i) (local.get $kb))))
            (local.set $s00 (v128.const i64x2 0 0))
            (local.set $s01 (v128.const i64x2 0 0))
            (local.set $p (i32.const 0))
            (loop $dot1
              (local.set $v (v128.load (i32.add (local.get $x0) (local.get $p))))
              (local.set $s00
                (f32x4.add (local.get $s00)
                  (f32x4.mul (local.get $v) (v128.load (i32.add (local.get $w0) (local.get $p))))))
              (local.set $s01
                (f32x4.add (local.get $s01)
                  (f32x4.mul (local.get $v) (v128.load (i32.add (local.get $w1) (local.get $p))))))
              (local.set $p (i32.add (local.get $p) (i32.const 16)))
              (br_if $dot1 (i32.lt_u (local.get $p) (local.get $kb))))
            (local.set $out
              (i32.add (local.get $y)
                (i32.add (i32.mul (local.get $i) (local.get $nb)) (i32.shl (local.get $j) (i32.const 2)))))
            (f32.store (local.get $out) (call $lanes (local.get $s00)))
            (f32.store offset=4 (local.get $out) (call $lanes (local.get $s01)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $next_1)))
        (local.set $j (i32.add (local.get $j) (i32.const 2)))
        (br $next_j))))

  ;; 16 codes 0..15 (one per byte of $codes) * $scale + $minimum, as 16 float32 at $at
  (func $put16 (param $codes v128) (param $scale v128) (param $minimum v128) (param $at i32)
    (local $half v128)
    (local.set $half (i16x8.extend_low_i8x16_u (local.get $codes)))
    (v128.store offset=0 (local.get $at)
      (f32x4.add (f32x4.mul (f32x4.convert_i32x4_u (i32x4.extend_low_i16x8_u (local.get $half)))
                            (local.get $scale)) (local.get $minimum)))
    (v128.store offset=16 (local.get $at)
      (f32x4.add (f32x4.mul (f32x4.convert_i32x4_u (i32x4.extend_high_i16x8_u (local.get $half)))
                            (local.get $scale)) (local.get $minimum)))
    (local.set $half (i16x8.extend_high_i8x16_u (local.get $codes)))
    (v128.store offset=32 (local.get $at)
      (f32x4.add (f32x4.mul (f32x4.convert_i32x4_u (i32x4.extend_low_i16x8_u (local.get $half)))
                            (local.get $scale)) (local.get $minimum)))
    (v128.store offset=48 (local.get $at)
      (f32x4.add (f32x4.mul (f32x4.convert_i32x4_u (i32x4.extend_high_i16x8_u (local.get $half)))
                            (local.get $scale)) (local.get $minimum))))

  (func (export "dequant_q4_1")
    (param $codes i32) (param $scale i32) (param $minimum i32) (param $out i32) (param $n i32)
    (local $b i32) (local $packed v128) (local $s v128) (local $m v128)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $b) (local.get $n)))
        (local.set $packed (v128.load (local.get $codes)))
        (local.set $s (f32x4.splat (f32.load (local.get $scale))))
        (local.set $m (f32x4.splat (f32.load (local.get $minimum))))
        ;; values 0..15 from the low halves of the bytes, 16..31 from the high halves
        (call $put16 (v128.and (local.get $packed) (v128.const i8x16 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15 15))
                     (local.get $s) (local.get $m) (local.get $out))
        (call $put16 (i8x16.shr_u (local.get $packed) (i32.const 4))
                     (local.get $s) (local.get $m) (i32.add (local.get $out) (i32.const 64)))
        (local.set $codes (i32.add (local.get $codes) (i32.const 16)))
        (local.set $scale (i32.add (local.get $scale) (i32.const 4)))
        (local.set $minimum (i32.add (local.get $minimum) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 128)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $next)))))

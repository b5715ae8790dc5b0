//go:build amd64 && !purego

#include "textflag.h"

// AVX2/FMA versions of the kernels in kernels.go. See kernels_amd64.go.
//
// e^x for x in [-708, 0] (EXPNEG): x = n·ln2 + r with n = round(x·log2 e) and
// r reduced with the two-part ln 2 of fdlibm, |r| <= ln2/2; e^r by a
// polynomial of degree 11 interpolating it at Chebyshev nodes (c0 = c1 = 1,
// e^r = 1 + r + r²q(r) with q interpolated at the 10 Chebyshev nodes of
// [-a, a], a = (1 + 1e-6)·ln2/2, in 50-digit arithmetic; relative error
// below 2e-17 with the coefficients rounded to double), evaluated as
// E(r²) + r·O(r²) so that the two halves run in parallel; 2^n built in the
// exponent field from the integer that adding 1.5·2^52 leaves in the low
// mantissa bits.
//
// log1p(y) for y in (0, 1] (LOG1P): log(1+y) = 2 atanh(s) with s = y/(y+2),
// or for y > √2−1, ln 2 + 2 atanh(s) with s = (y−1)/(y+3), so |s| <= 0.1716;
// 2 atanh(s) = 2s + s·R(s²) with fdlibm's minimax R(z) = Σ_{k=1..7} Lg_k z^k
// (error below 2^-58.45, e_log.c), evaluated as z·(E(z²) + z·O(z²)).

// sign bit
DATA signbit<>+0(SB)/8, $0x8000000000000000
DATA signbit<>+8(SB)/8, $0x8000000000000000
DATA signbit<>+16(SB)/8, $0x8000000000000000
DATA signbit<>+24(SB)/8, $0x8000000000000000
GLOBL signbit<>(SB), RODATA|NOPTR, $32

// -708: below it e^x would be subnormal
DATA expmin<>+0(SB)/8, $0xc086200000000000
DATA expmin<>+8(SB)/8, $0xc086200000000000
DATA expmin<>+16(SB)/8, $0xc086200000000000
DATA expmin<>+24(SB)/8, $0xc086200000000000
GLOBL expmin<>(SB), RODATA|NOPTR, $32

// log2(e)
DATA log2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA log2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA log2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA log2e<>+24(SB)/8, $0x3ff71547652b82fe
GLOBL log2e<>(SB), RODATA|NOPTR, $32

// 1.5·2^52: adding it rounds to an integer held in the low mantissa bits
DATA magic<>+0(SB)/8, $0x4338000000000000
DATA magic<>+8(SB)/8, $0x4338000000000000
DATA magic<>+16(SB)/8, $0x4338000000000000
DATA magic<>+24(SB)/8, $0x4338000000000000
GLOBL magic<>(SB), RODATA|NOPTR, $32

// ln 2, high part (fdlibm Cody–Waite split)
DATA ln2hi<>+0(SB)/8, $0x3fe62e42fee00000
DATA ln2hi<>+8(SB)/8, $0x3fe62e42fee00000
DATA ln2hi<>+16(SB)/8, $0x3fe62e42fee00000
DATA ln2hi<>+24(SB)/8, $0x3fe62e42fee00000
GLOBL ln2hi<>(SB), RODATA|NOPTR, $32

// ln 2, low part
DATA ln2lo<>+0(SB)/8, $0x3dea39ef35793c76
DATA ln2lo<>+8(SB)/8, $0x3dea39ef35793c76
DATA ln2lo<>+16(SB)/8, $0x3dea39ef35793c76
DATA ln2lo<>+24(SB)/8, $0x3dea39ef35793c76
GLOBL ln2lo<>(SB), RODATA|NOPTR, $32

// exponent bias 1023 (int64)
DATA bias<>+0(SB)/8, $0x00000000000003ff
DATA bias<>+8(SB)/8, $0x00000000000003ff
DATA bias<>+16(SB)/8, $0x00000000000003ff
DATA bias<>+24(SB)/8, $0x00000000000003ff
GLOBL bias<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c0 (≈ 1/0!)
DATA c0<>+0(SB)/8, $0x3ff0000000000000
DATA c0<>+8(SB)/8, $0x3ff0000000000000
DATA c0<>+16(SB)/8, $0x3ff0000000000000
DATA c0<>+24(SB)/8, $0x3ff0000000000000
GLOBL c0<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c1 (≈ 1/1!)
DATA c1<>+0(SB)/8, $0x3ff0000000000000
DATA c1<>+8(SB)/8, $0x3ff0000000000000
DATA c1<>+16(SB)/8, $0x3ff0000000000000
DATA c1<>+24(SB)/8, $0x3ff0000000000000
GLOBL c1<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c2 (≈ 1/2!)
DATA c2<>+0(SB)/8, $0x3fe0000000000001
DATA c2<>+8(SB)/8, $0x3fe0000000000001
DATA c2<>+16(SB)/8, $0x3fe0000000000001
DATA c2<>+24(SB)/8, $0x3fe0000000000001
GLOBL c2<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c3 (≈ 1/3!)
DATA c3<>+0(SB)/8, $0x3fc5555555555556
DATA c3<>+8(SB)/8, $0x3fc5555555555556
DATA c3<>+16(SB)/8, $0x3fc5555555555556
DATA c3<>+24(SB)/8, $0x3fc5555555555556
GLOBL c3<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c4 (≈ 1/4!)
DATA c4<>+0(SB)/8, $0x3fa5555555553d68
DATA c4<>+8(SB)/8, $0x3fa5555555553d68
DATA c4<>+16(SB)/8, $0x3fa5555555553d68
DATA c4<>+24(SB)/8, $0x3fa5555555553d68
GLOBL c4<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c5 (≈ 1/5!)
DATA c5<>+0(SB)/8, $0x3f811111111109b5
DATA c5<>+8(SB)/8, $0x3f811111111109b5
DATA c5<>+16(SB)/8, $0x3f811111111109b5
DATA c5<>+24(SB)/8, $0x3f811111111109b5
GLOBL c5<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c6 (≈ 1/6!)
DATA c6<>+0(SB)/8, $0x3f56c16c17889f40
DATA c6<>+8(SB)/8, $0x3f56c16c17889f40
DATA c6<>+16(SB)/8, $0x3f56c16c17889f40
DATA c6<>+24(SB)/8, $0x3f56c16c17889f40
GLOBL c6<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c7 (≈ 1/7!)
DATA c7<>+0(SB)/8, $0x3f2a01a01a7c2f2e
DATA c7<>+8(SB)/8, $0x3f2a01a01a7c2f2e
DATA c7<>+16(SB)/8, $0x3f2a01a01a7c2f2e
DATA c7<>+24(SB)/8, $0x3f2a01a01a7c2f2e
GLOBL c7<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c8 (≈ 1/8!)
DATA c8<>+0(SB)/8, $0x3efa019b9148739f
DATA c8<>+8(SB)/8, $0x3efa019b9148739f
DATA c8<>+16(SB)/8, $0x3efa019b9148739f
DATA c8<>+24(SB)/8, $0x3efa019b9148739f
GLOBL c8<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c9 (≈ 1/9!)
DATA c9<>+0(SB)/8, $0x3ec71de0db2eafc6
DATA c9<>+8(SB)/8, $0x3ec71de0db2eafc6
DATA c9<>+16(SB)/8, $0x3ec71de0db2eafc6
DATA c9<>+24(SB)/8, $0x3ec71de0db2eafc6
GLOBL c9<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c10 (≈ 1/10!)
DATA c10<>+0(SB)/8, $0x3e928917ca046b86
DATA c10<>+8(SB)/8, $0x3e928917ca046b86
DATA c10<>+16(SB)/8, $0x3e928917ca046b86
DATA c10<>+24(SB)/8, $0x3e928917ca046b86
GLOBL c10<>(SB), RODATA|NOPTR, $32

// e^r ≈ Σ c_k r^k on |r| <= ln2/2, c11 (≈ 1/11!)
DATA c11<>+0(SB)/8, $0x3e5af389eeb9e5e9
DATA c11<>+8(SB)/8, $0x3e5af389eeb9e5e9
DATA c11<>+16(SB)/8, $0x3e5af389eeb9e5e9
DATA c11<>+24(SB)/8, $0x3e5af389eeb9e5e9
GLOBL c11<>(SB), RODATA|NOPTR, $32

// fdlibm e_log.c Lg1
DATA lg1<>+0(SB)/8, $0x3fe5555555555593
DATA lg1<>+8(SB)/8, $0x3fe5555555555593
DATA lg1<>+16(SB)/8, $0x3fe5555555555593
DATA lg1<>+24(SB)/8, $0x3fe5555555555593
GLOBL lg1<>(SB), RODATA|NOPTR, $32

// fdlibm e_log.c Lg2
DATA lg2<>+0(SB)/8, $0x3fd999999997fa04
DATA lg2<>+8(SB)/8, $0x3fd999999997fa04
DATA lg2<>+16(SB)/8, $0x3fd999999997fa04
DATA lg2<>+24(SB)/8, $0x3fd999999997fa04
GLOBL lg2<>(SB), RODATA|NOPTR, $32

// fdlibm e_log.c Lg3
DATA lg3<>+0(SB)/8, $0x3fd2492494229359
DATA lg3<>+8(SB)/8, $0x3fd2492494229359
DATA lg3<>+16(SB)/8, $0x3fd2492494229359
DATA lg3<>+24(SB)/8, $0x3fd2492494229359
GLOBL lg3<>(SB), RODATA|NOPTR, $32

// fdlibm e_log.c Lg4
DATA lg4<>+0(SB)/8, $0x3fcc71c51d8e78af
DATA lg4<>+8(SB)/8, $0x3fcc71c51d8e78af
DATA lg4<>+16(SB)/8, $0x3fcc71c51d8e78af
DATA lg4<>+24(SB)/8, $0x3fcc71c51d8e78af
GLOBL lg4<>(SB), RODATA|NOPTR, $32

// fdlibm e_log.c Lg5
DATA lg5<>+0(SB)/8, $0x3fc7466496cb03de
DATA lg5<>+8(SB)/8, $0x3fc7466496cb03de
DATA lg5<>+16(SB)/8, $0x3fc7466496cb03de
DATA lg5<>+24(SB)/8, $0x3fc7466496cb03de
GLOBL lg5<>(SB), RODATA|NOPTR, $32

// fdlibm e_log.c Lg6
DATA lg6<>+0(SB)/8, $0x3fc39a09d078c69f
DATA lg6<>+8(SB)/8, $0x3fc39a09d078c69f
DATA lg6<>+16(SB)/8, $0x3fc39a09d078c69f
DATA lg6<>+24(SB)/8, $0x3fc39a09d078c69f
GLOBL lg6<>(SB), RODATA|NOPTR, $32

// fdlibm e_log.c Lg7
DATA lg7<>+0(SB)/8, $0x3fc2f112df3e5244
DATA lg7<>+8(SB)/8, $0x3fc2f112df3e5244
DATA lg7<>+16(SB)/8, $0x3fc2f112df3e5244
DATA lg7<>+24(SB)/8, $0x3fc2f112df3e5244
GLOBL lg7<>(SB), RODATA|NOPTR, $32

// 1
DATA one<>+0(SB)/8, $0x3ff0000000000000
DATA one<>+8(SB)/8, $0x3ff0000000000000
DATA one<>+16(SB)/8, $0x3ff0000000000000
DATA one<>+24(SB)/8, $0x3ff0000000000000
GLOBL one<>(SB), RODATA|NOPTR, $32

// 2
DATA two<>+0(SB)/8, $0x4000000000000000
DATA two<>+8(SB)/8, $0x4000000000000000
DATA two<>+16(SB)/8, $0x4000000000000000
DATA two<>+24(SB)/8, $0x4000000000000000
GLOBL two<>(SB), RODATA|NOPTR, $32

// √2 − 1
DATA sqrt2m1<>+0(SB)/8, $0x3fda827999fcef34
DATA sqrt2m1<>+8(SB)/8, $0x3fda827999fcef34
DATA sqrt2m1<>+16(SB)/8, $0x3fda827999fcef34
DATA sqrt2m1<>+24(SB)/8, $0x3fda827999fcef34
GLOBL sqrt2m1<>(SB), RODATA|NOPTR, $32

// ln 2
DATA ln2<>+0(SB)/8, $0x3fe62e42fefa39ef
DATA ln2<>+8(SB)/8, $0x3fe62e42fefa39ef
DATA ln2<>+16(SB)/8, $0x3fe62e42fefa39ef
DATA ln2<>+24(SB)/8, $0x3fe62e42fefa39ef
GLOBL ln2<>(SB), RODATA|NOPTR, $32

// torch Softplus threshold
DATA twenty<>+0(SB)/8, $0x4034000000000000
DATA twenty<>+8(SB)/8, $0x4034000000000000
DATA twenty<>+16(SB)/8, $0x4034000000000000
DATA twenty<>+24(SB)/8, $0x4034000000000000
GLOBL twenty<>(SB), RODATA|NOPTR, $32

// 0
DATA zero<>+0(SB)/8, $0x0000000000000000
DATA zero<>+8(SB)/8, $0x0000000000000000
DATA zero<>+16(SB)/8, $0x0000000000000000
DATA zero<>+24(SB)/8, $0x0000000000000000
GLOBL zero<>(SB), RODATA|NOPTR, $32

// EXPNEG sets X to e^X for X <= 0, and to 0 below -708 (where e^X is
// subnormal or 0); clobbers K, E, O, R2, M.
#define EXPNEG(X, K, E, O, R2, M) \
	VCMPPD $0x01, expmin<>(SB), X, M; \
	VMAXPD expmin<>(SB), X, X; \
	VMULPD log2e<>(SB), X, K; \
	VADDPD magic<>(SB), K, K; \
	VSUBPD magic<>(SB), K, E; \
	VFNMADD231PD ln2hi<>(SB), E, X; \
	VFNMADD231PD ln2lo<>(SB), E, X; \
	VMULPD X, X, R2; \
	VMOVUPD c10<>(SB), E; \
	VMOVUPD c11<>(SB), O; \
	VFMADD213PD c8<>(SB), R2, E; \
	VFMADD213PD c9<>(SB), R2, O; \
	VFMADD213PD c6<>(SB), R2, E; \
	VFMADD213PD c7<>(SB), R2, O; \
	VFMADD213PD c4<>(SB), R2, E; \
	VFMADD213PD c5<>(SB), R2, O; \
	VFMADD213PD c2<>(SB), R2, E; \
	VFMADD213PD c3<>(SB), R2, O; \
	VFMADD213PD c0<>(SB), R2, E; \
	VFMADD213PD c1<>(SB), R2, O; \
	VFMADD231PD O, X, E; \
	VPADDQ bias<>(SB), K, K; \
	VPSLLQ $52, K, K; \
	VMULPD K, E, X; \
	VANDNPD X, M, X

// LOG1P sets Y to log(1+Y) for 0 < Y <= 1; clobbers M, S, T, U, V. ONE holds 1.
#define LOG1P(Y, M, S, T, U, V, ONE) \
	VCMPPD $0x1e, sqrt2m1<>(SB), Y, M; \
	VANDPD ONE, M, T; \
	VSUBPD T, Y, S; \
	VADDPD two<>(SB), T, T; \
	VADDPD Y, T, T; \
	VDIVPD T, S, S; \
	VANDPD ln2<>(SB), M, M; \
	VMULPD S, S, T; \
	VMULPD T, T, U; \
	VMOVUPD lg7<>(SB), Y; \
	VFMADD213PD lg5<>(SB), U, Y; \
	VFMADD213PD lg3<>(SB), U, Y; \
	VFMADD213PD lg1<>(SB), U, Y; \
	VMOVUPD lg6<>(SB), V; \
	VFMADD213PD lg4<>(SB), U, V; \
	VFMADD213PD lg2<>(SB), U, V; \
	VFMADD231PD V, T, Y; \
	VMULPD T, Y, Y; \
	VADDPD S, S, T; \
	VFMADD231PD Y, S, T; \
	VADDPD M, T, Y

// GATET adds sigmoid(F)·softplus(C) to ACC given TF = e^-|F| and
// TC = e^-|C|, torch semantics (softplus(c) = c for c > 20); clobbers TF, TC,
// T1…T5. ONE holds 1.
#define GATET(F, C, TF, TC, ACC, T1, T2, T3, T4, T5, ONE) \
	VADDPD ONE, TF, T1; \
	VBLENDVPD F, TF, ONE, T2; \
	VDIVPD T1, T2, T2; \
	LOG1P(TC, T1, T3, T4, T5, TF, ONE); \
	VMAXPD zero<>(SB), C, T1; \
	VADDPD TC, T1, T1; \
	VCMPPD $0x1e, twenty<>(SB), C, T3; \
	VBLENDVPD T3, C, T1, T1; \
	VFMADD231PD T1, T2, ACC

// func edgeRowAVX2(out, p, q, gs, w *float64, n, k int)
// out[c] = p[c] + q[c] + Σ_{t<k} gs[t]·w[t·n + c], c < n; n a multiple of 4.
TEXT ·edgeRowAVX2(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ q+16(FP), DX
	MOVQ gs+24(FP), R8
	MOVQ w+32(FP), R9
	MOVQ n+40(FP), CX
	MOVQ k+48(FP), R10
	MOVQ CX, R11
	SHLQ $3, R11 // row stride of w in bytes

cols32:
	CMPQ CX, $32
	JLT  cols4
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VMOVUPD 128(SI), Y4
	VMOVUPD 160(SI), Y5
	VMOVUPD 192(SI), Y6
	VMOVUPD 224(SI), Y7
	VADDPD  0(DX), Y0, Y0
	VADDPD  32(DX), Y1, Y1
	VADDPD  64(DX), Y2, Y2
	VADDPD  96(DX), Y3, Y3
	VADDPD  128(DX), Y4, Y4
	VADDPD  160(DX), Y5, Y5
	VADDPD  192(DX), Y6, Y6
	VADDPD  224(DX), Y7, Y7
	MOVQ R8, BX  // gs[t]
	MOVQ R9, AX  // w[t·n + c]
	MOVQ R10, R12
	TESTQ R12, R12
	JZ   store32

loop32:
	VBROADCASTSD (BX), Y8
	VFMADD231PD 0(AX), Y8, Y0
	VFMADD231PD 32(AX), Y8, Y1
	VFMADD231PD 64(AX), Y8, Y2
	VFMADD231PD 96(AX), Y8, Y3
	VFMADD231PD 128(AX), Y8, Y4
	VFMADD231PD 160(AX), Y8, Y5
	VFMADD231PD 192(AX), Y8, Y6
	VFMADD231PD 224(AX), Y8, Y7
	ADDQ $8, BX
	ADDQ R11, AX
	DECQ R12
	JNZ  loop32

store32:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VMOVUPD Y4, 128(DI)
	VMOVUPD Y5, 160(DI)
	VMOVUPD Y6, 192(DI)
	VMOVUPD Y7, 224(DI)
	ADDQ $256, SI
	ADDQ $256, DX
	ADDQ $256, DI
	ADDQ $256, R9
	SUBQ $32, CX
	JMP  cols32

cols4:
	CMPQ CX, $4
	JLT  done
	VMOVUPD 0(SI), Y0
	VADDPD  0(DX), Y0, Y0
	MOVQ R8, BX
	MOVQ R9, AX
	MOVQ R10, R12
	TESTQ R12, R12
	JZ   store4

loop4:
	VBROADCASTSD (BX), Y8
	VFMADD231PD 0(AX), Y8, Y0
	ADDQ $8, BX
	ADDQ R11, AX
	DECQ R12
	JNZ  loop4

store4:
	VMOVUPD Y0, 0(DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	ADDQ $32, R9
	SUBQ $4, CX
	JMP  cols4

done:
	VZEROUPPER
	RET

// func gateSumAVX2(acc, z, t *float64, n, rows int)
// acc[c] += Σ_{r<rows} sigmoid(z[r·2n + c])·softplus(z[r·2n + n + c]), c < n;
// n a multiple of 4; t is scratch of 2n·rows elements. Two passes, so that
// the long dependency chains of e^x and log1p do not serialise: first
// t = e^-|z| for the whole block, then the gates.
TEXT ·gateSumAVX2(SB), NOSPLIT, $0-40
	MOVQ z+8(FP), SI
	MOVQ t+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ rows+32(FP), R10
	MOVQ CX, AX
	IMULQ R10, AX
	SHLQ $1, AX // 2n·rows values

gexp:
	CMPQ AX, $8
	JLT  gexp4
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y6
	VORPD signbit<>(SB), Y0, Y0
	VORPD signbit<>(SB), Y6, Y6
	EXPNEG(Y0, Y1, Y2, Y3, Y4, Y5)
	EXPNEG(Y6, Y7, Y8, Y9, Y10, Y11)
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y6, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $8, AX
	JMP  gexp

gexp4:
	CMPQ AX, $4
	JLT  gpass2
	VMOVUPD 0(SI), Y0
	VORPD signbit<>(SB), Y0, Y0
	EXPNEG(Y0, Y1, Y2, Y3, Y4, Y5)
	VMOVUPD Y0, 0(DI)

gpass2:
	MOVQ acc+0(FP), DI
	MOVQ z+8(FP), SI
	MOVQ t+16(FP), DX
	MOVQ CX, R11
	SHLQ $4, R11 // row stride of z and t in bytes (2n doubles)
	MOVQ CX, R9
	SHLQ $3, R9  // offset of the core half in bytes
	VMOVUPD one<>(SB), Y15

gcols:
	CMPQ CX, $4
	JLT  gdone
	VMOVUPD (DI), Y0
	MOVQ SI, AX
	MOVQ DX, BX
	MOVQ R10, R12
	TESTQ R12, R12
	JZ   gstore

grows:
	VMOVUPD (AX), Y1
	VMOVUPD (AX)(R9*1), Y2
	VMOVUPD (BX), Y3
	VMOVUPD (BX)(R9*1), Y4
	GATET(Y1, Y2, Y3, Y4, Y0, Y5, Y6, Y7, Y8, Y9, Y15)
	ADDQ R11, AX
	ADDQ R11, BX
	DECQ R12
	JNZ  grows

gstore:
	VMOVUPD Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	SUBQ $4, CX
	JMP  gcols

gdone:
	VZEROUPPER
	RET

// func softplusAVX2(dst, src *float64, n int)
// dst[i] = softplus(src[i]) for i < n; n a multiple of 4.
TEXT ·softplusAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVUPD one<>(SB), Y15

sloop:
	CMPQ CX, $4
	JLT  sdone
	VMOVUPD (SI), Y2
	VORPD signbit<>(SB), Y2, Y1
	EXPNEG(Y1, Y3, Y4, Y5, Y6, Y7)
	LOG1P(Y1, Y3, Y4, Y5, Y6, Y7, Y15)
	VMAXPD zero<>(SB), Y2, Y3
	VADDPD Y1, Y3, Y3
	VCMPPD $0x1e, twenty<>(SB), Y2, Y4
	VBLENDVPD Y4, Y2, Y3, Y3
	VMOVUPD Y3, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $4, CX
	JMP  sloop

sdone:
	VZEROUPPER
	RET

// func gemmAVX2(c, x, w, bias *float64, m, n, k int)
// c[r·n + j] = bias[j] + Σ_{t<k} x[r·k + t]·W[t][j] for r < m, j < n; n a
// multiple of 32, w in panels of 32 columns (see matmulLayout):
// W[t][32b + i] = w[b·32k + 32t + i]. A panel (k × 32, contiguous) stays in
// L1 while every row of x passes over it.
TEXT ·gemmAVX2(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ w+16(FP), R9
	MOVQ bias+24(FP), DX
	MOVQ n+40(FP), CX
	MOVQ k+48(FP), R10
	MOVQ CX, R11
	SHLQ $3, R11 // row stride of c in bytes

mcols:
	CMPQ CX, $32
	JLT  mdone
	MOVQ SI, BX        // x, row by row: the k loop leaves BX at the next row
	MOVQ DI, R8        // c, this column block
	MOVQ m+32(FP), R13 // rows left
	TESTQ R13, R13
	JZ   mnextcols

mrow:
	VMOVUPD 0(DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	VMOVUPD 128(DX), Y4
	VMOVUPD 160(DX), Y5
	VMOVUPD 192(DX), Y6
	VMOVUPD 224(DX), Y7
	MOVQ R9, AX
	MOVQ R10, R12
	TESTQ R12, R12
	JZ   mstore

mk:
	VBROADCASTSD (BX), Y8
	VFMADD231PD 0(AX), Y8, Y0
	VFMADD231PD 32(AX), Y8, Y1
	VFMADD231PD 64(AX), Y8, Y2
	VFMADD231PD 96(AX), Y8, Y3
	VFMADD231PD 128(AX), Y8, Y4
	VFMADD231PD 160(AX), Y8, Y5
	VFMADD231PD 192(AX), Y8, Y6
	VFMADD231PD 224(AX), Y8, Y7
	ADDQ $8, BX
	ADDQ $256, AX
	DECQ R12
	JNZ  mk

mstore:
	VMOVUPD Y0, 0(R8)
	VMOVUPD Y1, 32(R8)
	VMOVUPD Y2, 64(R8)
	VMOVUPD Y3, 96(R8)
	VMOVUPD Y4, 128(R8)
	VMOVUPD Y5, 160(R8)
	VMOVUPD Y6, 192(R8)
	VMOVUPD Y7, 224(R8)
	ADDQ R11, R8
	DECQ R13
	JNZ  mrow

mnextcols:
	MOVQ R10, AX
	SHLQ $8, AX
	ADDQ AX, R9 // the next panel: k rows of 32 further
	ADDQ $256, DI
	ADDQ $256, DX
	SUBQ $32, CX
	JMP  mcols

mdone:
	VZEROUPPER
	RET

//go:build amd64 && !purego

#include "textflag.h"

// func mulAdd4x8AVX2(y, x, m *float64, in, out int)
//
// y[i][j] += Σ_k x[i][k] m[k][j] for a block of 4 rows (i) × 8 columns (j):
// y and m have row stride out, x has row stride in; y and m point at the
// block's first column. Eight YMM accumulators (4 rows × 2 × 4 columns),
// per k two loads of m and four broadcasts of x feed eight FMAs.
TEXT ·mulAdd4x8AVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ in+24(FP), CX
	MOVQ out+32(FP), R8
	SHLQ $3, R8
	MOVQ CX, R9
	SHLQ $3, R9
	LEAQ (SI)(R9*1), R10
	LEAQ (R10)(R9*1), R11
	LEAQ (R11)(R9*1), R12
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ AX, AX

loop:
	CMPQ CX, $0
	JE   done
	VMOVUPD      (DX), Y8
	VMOVUPD      32(DX), Y9
	VBROADCASTSD (SI)(AX*1), Y10
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VBROADCASTSD (R10)(AX*1), Y11
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VBROADCASTSD (R11)(AX*1), Y12
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VBROADCASTSD (R12)(AX*1), Y13
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         $8, AX
	ADDQ         R8, DX
	DECQ         CX
	JMP          loop

done:
	VADDPD  (DI), Y0, Y0
	VMOVUPD Y0, (DI)
	VADDPD  32(DI), Y1, Y1
	VMOVUPD Y1, 32(DI)
	ADDQ    R8, DI
	VADDPD  (DI), Y2, Y2
	VMOVUPD Y2, (DI)
	VADDPD  32(DI), Y3, Y3
	VMOVUPD Y3, 32(DI)
	ADDQ    R8, DI
	VADDPD  (DI), Y4, Y4
	VMOVUPD Y4, (DI)
	VADDPD  32(DI), Y5, Y5
	VMOVUPD Y5, 32(DI)
	ADDQ    R8, DI
	VADDPD  (DI), Y6, Y6
	VMOVUPD Y6, (DI)
	VADDPD  32(DI), Y7, Y7
	VMOVUPD Y7, 32(DI)
	VZEROUPPER
	RET

// Constants of sigmoidsAVX2.
DATA sigc<>+0(SB)/8, $0x3ff71547652b82fe   // log2(e)
DATA sigc<>+8(SB)/8, $0x3fe62e42fee00000   // ln 2, high part (exact n·hi for |n| < 2^11)
DATA sigc<>+16(SB)/8, $0x3dea39ef35793c76  // ln 2, low part
DATA sigc<>+24(SB)/8, $0xc086232bdd7abcd2  // −708.39: e^x is normal above
DATA sigc<>+32(SB)/8, $0x3ff0000000000000  // 1
DATA sigc<>+40(SB)/8, $0x7fffffffffffffff  // |x| mask
DATA sigc<>+48(SB)/8, $0x00000000000003ff  // exponent bias
GLOBL sigc<>(SB), RODATA|NOPTR, $56

// 1/k! for k = 12 … 2, the Taylor coefficients of e^r beyond 1 + r.
DATA sigp<>+0(SB)/8, $0x3e21eed8eff8d898   // 1/12!
DATA sigp<>+8(SB)/8, $0x3e5ae64567f544e4   // 1/11!
DATA sigp<>+16(SB)/8, $0x3e927e4fb7789f5c  // 1/10!
DATA sigp<>+24(SB)/8, $0x3ec71de3a556c734  // 1/9!
DATA sigp<>+32(SB)/8, $0x3efa01a01a01a01a  // 1/8!
DATA sigp<>+40(SB)/8, $0x3f2a01a01a01a01a  // 1/7!
DATA sigp<>+48(SB)/8, $0x3f56c16c16c16c17  // 1/6!
DATA sigp<>+56(SB)/8, $0x3f81111111111111  // 1/5!
DATA sigp<>+64(SB)/8, $0x3fa5555555555555  // 1/4!
DATA sigp<>+72(SB)/8, $0x3fc5555555555555  // 1/3!
DATA sigp<>+80(SB)/8, $0x3fe0000000000000  // 1/2!
GLOBL sigp<>(SB), RODATA|NOPTR, $88

// func sigmoidsAVX2(dst, src *float64, n int)
//
// dst[i] = 1/(1 + e^(−src[i])) for n a multiple of 4: t = e^(−|x|) by
// e^u = 2^k e^r, k = round(u log2 e), r = u − k ln 2 (ln 2 in two parts),
// e^r by its Taylor series to degree 12 (|r| ≤ ln2/2: truncation below
// 2e-16); σ(x) = 1/(1 + t) for x ≥ 0 and t/(1 + t) below (no cancellation).
TEXT ·sigmoidsAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD sigc<>+0(SB), Y15  // log2 e
	VBROADCASTSD sigc<>+8(SB), Y14  // ln2 hi
	VBROADCASTSD sigc<>+16(SB), Y13 // ln2 lo
	VBROADCASTSD sigc<>+24(SB), Y12 // lower bound of u
	VBROADCASTSD sigc<>+32(SB), Y11 // 1
	VBROADCASTSD sigc<>+40(SB), Y10 // abs mask
	VBROADCASTSD sigc<>+48(SB), Y9  // 1023 (as int64)

sloop:
	CMPQ CX, $0
	JLE  sdone
	VMOVUPD (SI), Y0               // x
	VANDPD  Y10, Y0, Y1            // |x|
	VXORPD  Y2, Y2, Y2
	VSUBPD  Y1, Y2, Y1             // u = −|x|
	VMAXPD  Y12, Y1, Y1            // u ≥ −708.39
	VMULPD  Y15, Y1, Y2            // u log2 e
	VROUNDPD $0, Y2, Y2            // k
	VMOVAPD Y1, Y3
	VFNMADD231PD Y14, Y2, Y3       // r = u − k·hi
	VFNMADD231PD Y13, Y2, Y3       // r −= k·lo
	VBROADCASTSD sigp<>+0(SB), Y4
	VBROADCASTSD sigp<>+8(SB), Y5
	VFMADD213PD Y5, Y3, Y4         // p = p·r + c
	VBROADCASTSD sigp<>+16(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD sigp<>+24(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD sigp<>+32(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD sigp<>+40(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD sigp<>+48(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD sigp<>+56(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD sigp<>+64(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD sigp<>+72(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VBROADCASTSD sigp<>+80(SB), Y5
	VFMADD213PD Y5, Y3, Y4
	VFMADD213PD Y11, Y3, Y4        // p·r + 1
	VFMADD213PD Y11, Y3, Y4        // e^r = p·r + 1
	VCVTPD2DQY Y2, X6              // k as int32
	VPMOVSXDQ  X6, Y6              // as int64
	VPADDQ     Y9, Y6, Y6          // k + 1023
	VPSLLQ     $52, Y6, Y6         // 2^k
	VMULPD     Y6, Y4, Y4          // t = e^u
	VADDPD     Y11, Y4, Y5         // 1 + t
	VDIVPD     Y5, Y11, Y5         // q = 1/(1 + t)
	VMULPD     Y5, Y4, Y4          // t·q = t/(1 + t)
	VXORPD     Y7, Y7, Y7
	VCMPPD     $1, Y7, Y0, Y7      // mask: x < 0
	VANDPD     Y7, Y4, Y4          // t/(1 + t) where x < 0
	VANDNPD    Y5, Y7, Y5          // q where x ≥ 0
	VORPD      Y5, Y4, Y4
	VMOVUPD    Y4, (DI)
	ADDQ       $32, SI
	ADDQ       $32, DI
	SUBQ       $4, CX
	JMP        sloop

sdone:
	VZEROUPPER
	RET

// func mulBias4x8AVX2(y, x, m, b *float64, in, out int)
//
// y[i][j] = b[j] + Σ_k x[i][k] m[k][j] for a block of 4 rows × 8 columns,
// as mulAdd4x8AVX2 but overwriting y; b (the block's first bias, or nil
// for none) starts every row's sums.
TEXT ·mulBias4x8AVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ m+16(FP), DX
	MOVQ b+24(FP), BX
	MOVQ in+32(FP), CX
	MOVQ out+40(FP), R8
	SHLQ $3, R8
	MOVQ CX, R9
	SHLQ $3, R9
	LEAQ (SI)(R9*1), R10
	LEAQ (R10)(R9*1), R11
	LEAQ (R11)(R9*1), R12
	TESTQ BX, BX
	JZ    bzero
	VMOVUPD (BX), Y0
	VMOVUPD 32(BX), Y1
	JMP     binit

bzero:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1

binit:
	VMOVAPD Y0, Y2
	VMOVAPD Y1, Y3
	VMOVAPD Y0, Y4
	VMOVAPD Y1, Y5
	VMOVAPD Y0, Y6
	VMOVAPD Y1, Y7
	XORQ    AX, AX

bloop:
	CMPQ CX, $0
	JE   bdone
	VMOVUPD      (DX), Y8
	VMOVUPD      32(DX), Y9
	VBROADCASTSD (SI)(AX*1), Y10
	VFMADD231PD  Y8, Y10, Y0
	VFMADD231PD  Y9, Y10, Y1
	VBROADCASTSD (R10)(AX*1), Y11
	VFMADD231PD  Y8, Y11, Y2
	VFMADD231PD  Y9, Y11, Y3
	VBROADCASTSD (R11)(AX*1), Y12
	VFMADD231PD  Y8, Y12, Y4
	VFMADD231PD  Y9, Y12, Y5
	VBROADCASTSD (R12)(AX*1), Y13
	VFMADD231PD  Y8, Y13, Y6
	VFMADD231PD  Y9, Y13, Y7
	ADDQ         $8, AX
	ADDQ         R8, DX
	DECQ         CX
	JMP          bloop

bdone:
	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	ADDQ    R8, DI
	VMOVUPD Y2, (DI)
	VMOVUPD Y3, 32(DI)
	ADDQ    R8, DI
	VMOVUPD Y4, (DI)
	VMOVUPD Y5, 32(DI)
	ADDQ    R8, DI
	VMOVUPD Y6, (DI)
	VMOVUPD Y7, 32(DI)
	VZEROUPPER
	RET

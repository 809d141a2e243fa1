package kernels

import "fmt"

// The branch directions of the committed PTX that no launch through our
// launchers and contracts takes, with the reason (see Unreachable). The
// property suite on the emulator covers every other direction, and fails
// on any it leaves uncovered that this file does not explain.
//
// The lines follow the committed PTX: recompiling a kernel (make ptx)
// moves them, and the suite's coverage check names each entry that no
// longer matches an uncovered direction. Every direction is listed, even
// where one reason covers many, so that a shifted line is caught.

const (
	whyGrid      = "the launcher's grid has exactly one block per row (or row group), so blockIdx.x never reaches the row count"
	whyChunkGrid = "the launcher's grid has ceil(rows/chunk) blocks (kernels.ChunkBlocks), so block b's first row b·chunk is below rows and its rows [r0, r1) are never empty"
	whyAligned   = "the pointer tested is the launcher's own scratch (the per-block partial sums), a fresh allocation and so 16-byte aligned: the contracts misalign the operation's tensors (op.Offsets), never the scratch, so this alignment test never fails"
	// rmsnorm_bwd_chunk: the body for hidden > ACC_SMEM_MAX = 8192 (line
	// 355 not taken) and the launcher's blocks of at most 256 threads.
	whyBwdWideScalar   = "in the body for hidden > 8192 (line 355) no thread index (below blockDim.x ≤ 256) reaches hidden"
	whyBwdWideVector   = "in the float4 body for hidden > 8192 (line 355) n4 = hidden/4 ≥ 2049 exceeds every thread index (below blockDim.x ≤ 256)"
	whyBwdWideCached   = "blockDim.x == 256 && hidden < 8196 (the register-cached path) cannot hold where line 355 decided hidden > 8192 and line 321 hidden % 4 == 0, so hidden ≥ 8196"
	whyBwdWideInCached = "in the register-cached path of the body for hidden > 8192, which no launch enters (line 1304 is never taken)"
	whyBwdWideOne      = "n4 ≤ blockDim.x cannot hold where line 355 decided hidden > 8192: n4 ≥ 2049 > 256"
	whyBwdWideInOne    = "in the one-group path of the body for hidden > 8192, which no launch enters (line 2042 is always taken)"
	whyBwdReread       = "n4 > blockDim.x cannot hold outside the 256-thread register-cached path: the launcher's block (kernels.ChunkThreads) has min(256, max(32, roundup32(n4))) threads, at least n4 below 256, and at 256 threads every hidden ≤ 8192 took line 716"
	whyBwdInReread     = "in the re-reading float4 loop of the shared-memory body, which no launch enters (line 1868 is never taken)"
	// layernorm_bwd_chunk: the body for 2·hidden > ACC_SMEM_MAX = 8192
	// (line 814 not taken).
	whyLNWideScalar = "in the body for 2·hidden > 8192 (line 814) no thread index (below blockDim.x ≤ 256) reaches hidden ≥ 4097"
	whyLNWideVector = "in the float4 body for 2·hidden > 8192 (line 814) n4 = hidden/4 ≥ 1025 exceeds every thread index (below blockDim.x ≤ 256)"
	// rope: checkRoPE refuses heads < 1 and θ that is not a finite base ≥ 1.
	whyRoPEHeads  = "checkRoPE refuses heads < 1, so the loop over the heads runs at least once"
	whyRoPETheta  = "log2f's path for an input whose bits are at least those of +∞ (θ negative, −0, +∞ or NaN): checkRoPE refuses θ that is not a finite base ≥ 1"
	whyRoPEInf    = "sincosf's infinite-angle path: checkRoPE refuses θ < 1, so every frequency θ^(−2i/head_dim) is at most 1 and the angle pos·freq at most 2³²"
	whyRoPEShift0 = "sincosf's Payne–Hanek reduction with a bit offset that is a multiple of 32 needs |angle| in [2³³, 2³⁴) (biased exponent 160): checkRoPE refuses θ < 1, so the angle is at most the position, below 2³² (exponent ≤ 159); the reduction runs from 105615 (exponent 143)"
)

// firstSlot is the reason of an unrolled loop's first slot, where the
// compiler re-tests the loop condition: the slot's index is the loop's
// own i0, which the entry test and the back edge just compared with n.
func firstSlot(entry, back int) string {
	return fmt.Sprintf("the compiler re-tests the unrolled loop's first slot, i0 < n, which its entry test (line %d) and back edge (line %d) decided", entry, back)
}

// slots lists the taken direction of the first-slot tests at lines of one
// unrolled loop (firstSlot).
func slots(entry, back int, lines ...int) []Unreachable {
	why := firstSlot(entry, back)
	out := make([]Unreachable, len(lines))
	for i, l := range lines {
		out[i] = Unreachable{l, "taken", why}
	}
	return out
}

// both lists both directions of the branches at lines, for a block no
// launch enters.
func both(why string, lines ...int) []Unreachable {
	var out []Unreachable
	for _, l := range lines {
		out = append(out, Unreachable{l, "taken", why}, Unreachable{l, "not taken", why})
	}
	return out
}

// taken lists the taken direction of the branches at lines.
func taken(why string, lines ...int) []Unreachable {
	out := make([]Unreachable, len(lines))
	for i, l := range lines {
		out[i] = Unreachable{l, "taken", why}
	}
	return out
}

// join concatenates lists of Unreachable.
func join(ls ...[]Unreachable) []Unreachable {
	var out []Unreachable
	for _, l := range ls {
		out = append(out, l...)
	}
	return out
}

var unreachable = map[string][]Unreachable{
	"rmsnorm_fwd": join([]Unreachable{
		{42, "taken", whyGrid}, // setp.ge.u32 %p3, %r1, %r44;
	},
		slots(79, 174, 90, 124),   // pass 1, float4, row in shared memory
		slots(179, 262, 190, 224), // pass 1, scalar, row in shared memory
		slots(79, 337, 269, 303),  // pass 1, float4
		slots(179, 400, 344, 378), // pass 1, scalar
		slots(489, 562, 506, 528), // pass 2, float4, row in shared memory
		slots(567, 628, 584, 606), // pass 2, scalar, row in shared memory
		slots(489, 693, 639, 659), // pass 2, float4
		slots(567, 746, 704, 724), // pass 2, scalar
	),
	"rmsnorm_fwd_rms": join([]Unreachable{
		{778, "taken", whyGrid}, // setp.ge.u32 %p3, %r1, %r44;
	},
		slots(815, 913, 827, 862),     // pass 1, float4, row in shared memory
		slots(919, 1003, 931, 965),    // pass 1, scalar, row in shared memory
		slots(815, 1080, 1012, 1046),  // pass 1, float4
		slots(919, 1145, 1089, 1123),  // pass 1, scalar
		slots(1245, 1317, 1261, 1283), // pass 2, float4, row in shared memory
		slots(1322, 1382, 1338, 1360), // pass 2, scalar, row in shared memory
		slots(1245, 1446, 1392, 1412), // pass 2, float4
		slots(1322, 1498, 1456, 1476), // pass 2, scalar
	),
	"rmsnorm_bwd_chunk": join([]Unreachable{
		{1304, "taken", whyBwdWideCached},  // and.pred %p18, %p16, %p17;
		{2042, "not taken", whyBwdWideOne}, // setp.gt.u32 %p19, %r6, %r3;
		{1868, "taken", whyBwdReread},      // setp.gt.u32 %p118, %r30, %r3;
	},
		taken(whyChunkGrid, 380, 557, 721, 2047, 2212), // setp.ge.u32 r0, r1
		taken(whyBwdWideScalar, 542, 569, 658),         // setp.ge.u32 %p91, %r4, %r62;
		taken(whyBwdWideVector, 1286, 2062, 2157),      // setp.ge.u32 %p14, %r4, %r6;
		both(whyBwdWideInCached, 1309, 1328, 1335, 1343, 1351, 1359, 1367, 1375, 1383,
			1392, 1424, 1456, 1488, 1520, 1552, 1584, 1616, 1675,
			1704, 1722, 1741, 1760, 1779, 1798, 1817, 1836, 1863),
		both(whyBwdWideInOne, 2382, 2400, 2407, 2463, 2501, 2525),
		both(whyBwdInReread, 1873, 1888, 1914, 1945, 1983, 2030, 2035),
	),
	"fused_residual_rmsnorm": {
		{46, "taken", whyGrid}, // setp.ge.u32 %p3, %r1, %r17;
	},
	"layernorm_fwd": {
		{48, "taken", whyGrid}, // setp.ge.u32 %p3, %r1, %r20;
	},
	"layernorm_fwd_stats": {
		{398, "taken", whyGrid}, // setp.ge.u32 %p3, %r1, %r20;
	},
	"layernorm_bwd_chunk": join([]Unreachable{
		{792, "taken", whyAligned}, // setp.ne.s64 %p14, %rd32, 0;
	},
		taken(whyChunkGrid, 842, 1082, 1298, 1569), // setp.ge.u32 r0, r1
		taken(whyLNWideScalar, 1065, 1096, 1231),   // setp.ge.u32 %p43, %r226, %r50;
		taken(whyLNWideVector, 1552, 1586, 1733),   // setp.ge.u32 %p16, %r226, %r7;
	),
	"rope_neox_fwd": {
		{96, "not taken", whyRoPETheta}, // setp.lt.u32 %p3, %r34, 2139095040;
		{127, "taken", whyRoPEInf},      // setp.eq.f32 %p6, %f7, 0f7F800000;
		{172, "taken", whyRoPEShift0},   // setp.eq.s32 %p8, %r45, 0;
		{254, "taken", whyRoPEHeads},    // setp.eq.s32 %p15, %r25, 0;
	},
	"rope_neox_fwd_batched": {
		{464, "not taken", whyRoPETheta}, // setp.lt.u32 %p3, %r34, 2139095040;
		{495, "taken", whyRoPEInf},       // setp.eq.f32 %p6, %f7, 0f7F800000;
		{540, "taken", whyRoPEShift0},    // setp.eq.s32 %p8, %r45, 0;
		{621, "taken", whyRoPEHeads},     // setp.eq.s32 %p15, %r25, 0;
	},
	"rope_neox_bwd_batched": {
		{831, "not taken", whyRoPETheta}, // setp.lt.u32 %p3, %r34, 2139095040;
		{862, "taken", whyRoPEInf},       // setp.eq.f32 %p6, %f7, 0f7F800000;
		{907, "taken", whyRoPEShift0},    // setp.eq.s32 %p8, %r45, 0;
		{988, "taken", whyRoPEHeads},     // setp.eq.s32 %p15, %r25, 0;
	},
	"softmax_fwd": {
		{39, "taken", whyGrid}, // setp.ge.u32 %p1, %r1, %r14;
	},
	"softmax_bwd": {
		{269, "taken", whyGrid}, // setp.ge.u32 %p1, %r1, %r9;
	},
}

"""Issue 24: the kernel-source line of each line of Triton's IR stages, read from the locations Triton writes
(torch-free; the H200 fixture checks real IR in tests/views/test_metal_fixtures.py)."""

from inductor_lens.capturing.parse import ir_source_lines

TTIR = """#loc = loc("/tmp/torchinductor/ab/cab.py":18:0)
module {
  tt.func public @triton_poi_fused_add_0(%arg0: !tt.ptr<f32> loc("/tmp/torchinductor/ab/cab.py":18:0)) {
    %c128_i32 = arith.constant 128 : i32 loc(#loc1)
    %0 = tt.get_program_id x : i32 loc(#loc2)
    %1 = arith.muli %0, %c128_i32 : i32 loc(#loc10)
    tt.return loc(#loc5)
  } loc(#loc)
} loc(#loc)
#loc1 = loc(unknown)
#loc2 = loc("/tmp/torchinductor/ab/cab.py":20:28)
#loc5 = loc("/tmp/torchinductor/ab/cab.py":25:4)
#loc10 = loc("xoffset"(#loc2))"""

LLIR = """define void @k(ptr addrspace(1) %0) !dbg !5 {
  %2 = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x(), !dbg !10
  ret void, !dbg !11
}
!10 = !DILocation(line: 20, column: 28, scope: !5)
!11 = !DILocation(line: 25, column: 4, scope: !5)"""

PTX = """.visible .entry k(
	.param .u64 k_param_0
)
{
	.loc	1 20 28
	mov.u32 	%r1, %ctaid.x;
	shl.b32 	%r2, %r1, 7;
	.loc	1 25 4
	ret;
}"""


def test_each_stage_maps_its_lines_to_the_kernel_source():
    tt = ir_source_lines("ttir", TTIR)
    assert tt[:9] == [None, None, 18, None, 20, 20, 25, 18, 18]  # loc(unknown) has no line; #loc10 names #loc2
    assert tt[9:] == [None] * 4  # the location table itself
    assert ir_source_lines("llir", LLIR) == [None, 20, 25, None, None, None]
    assert ir_source_lines("ptx", PTX) == [None, None, None, None, None, 20, 20, None, 25, None]
    assert ir_source_lines("ptx", "ret;") is None and ir_source_lines("sass", "x") is None
    assert ir_source_lines("ttir", None) is None

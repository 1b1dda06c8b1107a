"""AOTInductor and cpp_wrapper compiles (issue 16 section 5): named as what they are, kernel sources found in
the C++ (``extern "C"`` functions) rather than in Python output code. The AOTInductor compile's test is in
test_names.py, which reads the same compile for its trigger and input names (one AOTInductor build fewer)."""

import pytest
import torch

import inductor_lens
from inductor_lens.capturing.parse import parse_output_code_kernels

_CPP = """
extern "C"  void  cpp_fused_sin_0(const float* in_ptr0,
                       float* out_ptr0);
void inductor_entry_impl() {
    cpp_fused_sin_0((const float*)(a.data_ptr()), (float*)(b.data_ptr()));
}
extern "C"  void  cpp_fused_sin_0(const float* in_ptr0,
                       float* out_ptr0)
{
    for (int i = 0; i < 8; i++) { out_ptr0[i] = std::sin(in_ptr0[i]); }
}
"""


def test_extern_c_definitions_are_kernels_and_declarations_are_not():
    kernels = parse_output_code_kernels(_CPP)
    assert list(kernels) == ["cpp_fused_sin_0"]
    language, source = kernels["cpp_fused_sin_0"]
    assert language == "cpp" and source.startswith('extern "C"') and source.rstrip().endswith("}")
    assert "std::sin" in source and "inductor_entry_impl" not in source


@pytest.mark.slow
def test_cpp_wrapper_kernels_have_their_source():
    with torch._inductor.config.patch({"cpp_wrapper": True}), inductor_lens.capture() as cap:
        torch.compile(lambda x: torch.sin(x) * 2 + 1)(torch.randn(8))
    (k,) = cap.report.kernels
    assert k.language == "cpp" and 'extern "C"' in k.source and k.source in cap.report.compiles[0].output_code
    assert not [d for d in cap.report.diagnostics if d.code == "source_missing"]
    # its launch is a C++ call the lens does not read: said once for the compile, and by the reproducer, rather
    # than a launch table and a "Copy reproducer" button missing with no word (and "capture it with this version")
    assert k.launch is None and k.reproducer == ""
    (unread,) = [d for d in cap.report.diagnostics if d.code == "launch_unread"]
    assert "0/0 inference" in unread.message and "cpp_wrapper=True" in unread.message, unread.message
    from inductor_lens.analysis.reproducer import ReproducerError, reproducer

    with pytest.raises(ReproducerError, match=r"C\+\+ wrapper \(cpp_wrapper=True"):
        reproducer(cap.report, k.name)

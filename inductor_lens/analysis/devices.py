"""Peak memory bandwidth and compute of common accelerators, from their vendors' datasheets. Torch-free.

Numbers are the datasheet's dense figures (the "with sparsity" figures halved back), in GB/s and TFLOP/s.
``tf32``/``bf16``/``fp16`` are tensor-core (matrix) peaks; ``fp32`` is the non-tensor-core FP32 peak (what an
FP32 matmul reaches without TF32); ``int8`` is the INT8 tensor-core peak in tera integer operations per second (TOPS),
what a kernel of int8 multiply-adds (``Cost.integer_ops``) is compared with. On a CPU there is no table: the profile
measures the bandwidth and a float32 matmul (see ``inductor_lens.capturing.kernel_timing.probe_cpu``), and no int8
peak: torch's CPU ``_int_mm`` is no VNNI/AMX kernel to measure one with, so an int8 kernel there is compared with
none (never with the float32 one).
"""

from __future__ import annotations

import re
from typing import Optional

from ..report.model import DeviceInfo

_H100 = "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100), dense figures"
_H200 = "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200), dense figures"
_A100 = "NVIDIA A100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/a100), dense figures"
_L4 = "NVIDIA L4 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/l4), dense figures"
_MI300X = (
    "AMD Instinct MI300X accelerator data sheet (amd.com/en/products/accelerators/instinct/mi300/mi300x), "
    "dense figures; fp32 is the matrix FP32 peak"
)

#: (pattern on the device name, table name, peak GB/s, {dtype: peak TFLOP/s}, source). First match wins.
PEAKS: list[tuple[str, str, float, dict[str, float], str]] = [
    (
        r"H200 NVL",
        "NVIDIA H200 NVL",
        4800.0,
        {"fp32": 60.0, "tf32": 417.5, "bf16": 835.5, "fp16": 835.5, "int8": 1670.5},
        _H200,
    ),
    (
        r"H200",
        "NVIDIA H200 SXM",
        4800.0,
        {"fp32": 67.0, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "int8": 1979.0},
        _H200,
    ),
    (
        r"H100 NVL",
        "NVIDIA H100 NVL",
        3900.0,
        {"fp32": 60.0, "tf32": 417.5, "bf16": 835.5, "fp16": 835.5, "int8": 1670.5},
        _H100,
    ),
    (
        r"H100.*PCIe",
        "NVIDIA H100 PCIe",
        2000.0,
        {"fp32": 51.0, "tf32": 378.0, "bf16": 756.0, "fp16": 756.0, "int8": 1513.0},
        _H100,
    ),
    (
        r"H100",
        "NVIDIA H100 SXM",
        3350.0,
        {"fp32": 67.0, "tf32": 494.5, "bf16": 989.5, "fp16": 989.5, "int8": 1979.0},
        _H100,
    ),
    (
        r"A100.*80GB.*PCIe|A100.*PCIe.*80GB",
        "NVIDIA A100 80GB PCIe",
        1935.0,
        {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0, "int8": 624.0},
        _A100,
    ),
    (
        r"A100.*80GB",
        "NVIDIA A100 80GB SXM",
        2039.0,
        {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0, "int8": 624.0},
        _A100,
    ),
    (
        r"A100",
        "NVIDIA A100 40GB",
        1555.0,
        {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0, "int8": 624.0},
        _A100,
    ),
    (r"\bL4\b", "NVIDIA L4", 300.0, {"fp32": 30.3, "tf32": 60.0, "bf16": 121.0, "fp16": 121.0, "int8": 242.5}, _L4),
    (
        r"MI300X",
        "AMD Instinct MI300X",
        5300.0,
        {"fp32": 163.4, "tf32": 653.7, "bf16": 1307.4, "fp16": 1307.4, "int8": 2614.9},
        _MI300X,
    ),
]


def lookup(device_name: str) -> Optional[DeviceInfo]:
    """The table's entry for a device name as torch reports it (``"NVIDIA H200"``), or None."""
    for pattern, name, gbps, tflops, source in PEAKS:
        if re.search(pattern, device_name or "", re.IGNORECASE):
            return DeviceInfo(
                name=f"{device_name} (table: {name})" if name != device_name else name,
                peak_gbps=gbps,
                peak_tflops=dict(tflops),
                source=source,
            )
    return None


def peak_dtype(dtype: Optional[str], allow_tf32: bool = False) -> str:
    """The ``peak_tflops`` key for a kernel computing in ``dtype`` (report dtype names; ``int8``/``uint8``: its
    integer ops, ``Cost.integer_ops``)."""
    if dtype in ("int8", "uint8"):
        return "int8"
    if dtype in ("bfloat16",):
        return "bf16"
    if dtype in ("float16", "half"):
        return "fp16"
    return "tf32" if allow_tf32 else "fp32"

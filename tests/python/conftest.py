"""Fixtures shared by the test files: the frameworks a test needs, skipping cleanly where they (or
a CUDA device with ringmm's CUDA backend) are missing."""

import pytest

from devices import cuda_build_with_device


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def torch_cuda(torch):
    if not (torch.cuda.is_available() and cuda_build_with_device()):
        pytest.skip("needs torch with a CUDA device and ringmm's CUDA backend")
    return torch


@pytest.fixture
def cupy():
    cupy = pytest.importorskip("cupy")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:
        count = 0
    if not (count and cuda_build_with_device()):
        pytest.skip("needs cupy with a CUDA device and ringmm's CUDA backend")
    return cupy

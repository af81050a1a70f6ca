"""Whether GPU tests can run: ringmm's CUDA backend compiled in and a device present."""

import ringmm


def cuda_build_with_device():
    return bool(ringmm.info()["cuda_devices"])

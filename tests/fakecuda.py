"""A stand-in accelerator for the tests: the library's device path run on a machine without a GPU.

torch's ``FakeTensorMode`` puts tensors on device ``cuda`` on this CPU-only build, but it cannot slice
them, copy into them, move a module to ``cuda`` or call ``.to("cuda")`` (the C++ device guard of CUDA is not
linked: "PyTorch is not linked with support for cuda devices"), and every training step does these.  So
the harness runs the library on the ``meta`` device instead (shape-only tensors: a device other than the
CPU that this build runs every operation on, at no cost) under a dispatch mode that applies CUDA's rules
itself:

- an operation whose tensors sit on two devices raises ``DeviceMismatch``, naming the operation and the
  devices (a 0-dim CPU tensor is allowed beside device tensors, as CUDA takes it as a scalar; copies
  between devices are allowed, as ``.to(device)`` is);
- every device-to-host read (``.item()``, ``float()``, ``bool()``, ``int()``, ``.tolist()``, a copy to the
  CPU) is counted in ``reads`` with the place in the library it came from; it is answered with a
  placeholder (False for a boolean, so no divergence check fires; 0 for an integer; 0.5 for a float), or
  refused with ``HostRead`` while ``forbid_reads`` is set.

``seeds.GENERATOR`` (the library's one seam for this) is swapped for a CPU generator that reports the
device, because no ``torch.Generator`` can be made on ``meta`` (nor on ``cuda`` without CUDA).
"""

from __future__ import annotations

import contextlib
import traceback

import torch
from stsq.core import seeds
from stsq.sts import positions
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

DEVICE = torch.device("meta")  # the stand-in accelerator
aten = torch.ops.aten
# operations that take tensors on two devices by design: the copies between devices
COPIES = {aten._to_copy.default, aten.copy_.default, aten.copy.default, aten._copy_from.default,
          aten._copy_from_and_resize.default, aten.lift_fresh.default}


class DeviceMismatch(AssertionError):
    """An operation mixed tensors of two devices (a crash at the first step on a real GPU)."""


class HostRead(AssertionError):
    """A device-to-host read where none may happen."""


class FakeGenerator(torch.Generator):
    """A CPU generator that reports ``device`` (the library draws on ``generator.device``)."""

    def __new__(cls, device="cpu"):
        g = super().__new__(cls)
        g._device = torch.device(device)
        return g

    def __init__(self, device="cpu"):
        pass

    @property
    def device(self):
        return self._device


def _caller() -> str:
    """The innermost frame in the library (stsq/) that led to the current operation: 'module.py:line function'."""
    for f in reversed(traceback.extract_stack()):
        if "/stsq/" in f.filename.replace("\\", "/"):
            return f"{f.filename.rsplit('/', 1)[-1]}:{f.lineno} {f.name}"
    return "outside stsq"


class FakeDevice(TorchDispatchMode):
    """Checks every operation's devices and counts the host reads (module docstring)."""

    def __init__(self, forbid_reads: bool = False):
        super().__init__()
        self.forbid_reads = forbid_reads
        self.reads: list[str] = []  # where each read came from (``_caller``)
        self.ops = 0

    def _read(self, func):
        where = _caller()
        if self.forbid_reads:
            raise HostRead(f"a device-to-host read ({func}) at {where}")
        self.reads.append(where)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.ops += 1
        tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        if func is aten._local_scalar_dense.default:
            if tensors[0].device == DEVICE:
                self._read(func)
                t = tensors[0]
                return False if t.dtype == torch.bool else 0 if not t.dtype.is_floating_point else 0.5
            return func(*args, **kwargs)
        if func in COPIES:
            src = tensors[-1] if func is not aten._to_copy.default else tensors[0]
            to_cpu = (kwargs.get("device", src.device) if func is aten._to_copy.default
                      else tensors[0].device).type == "cpu"
            if src.device == DEVICE and to_cpu:  # a copy to the host: zeros of the copy's shape
                self._read(func)
                if func is aten._to_copy.default:
                    return torch.zeros(src.shape, dtype=kwargs.get("dtype") or src.dtype)
                return tensors[0].zero_()
            return func(*args, **kwargs)
        devices = {t.device for t in tensors if not (t.device.type == "cpu" and t.dim() == 0)}
        if len(devices) > 1:
            raise DeviceMismatch(f"{func} mixes tensors on {', '.join(sorted(map(str, devices)))} "
                                 f"(shapes {[tuple(t.shape) for t in tensors]}) at {_caller()}")
        return func(*args, **kwargs)


@contextlib.contextmanager
def fake_device(forbid_reads: bool = False):
    """Run the library on the stand-in device (``DEVICE``): yields the ``FakeDevice`` mode, whose ``reads``
    list the host reads made inside."""
    mode = FakeDevice(forbid_reads)
    saved = seeds.GENERATOR
    positions._range_table.cache_clear()  # no table cached for a device outside the mode
    seeds.GENERATOR = FakeGenerator
    try:
        with mode:
            yield mode
    finally:
        seeds.GENERATOR = saved
        positions._range_table.cache_clear()

"""NumPy <-> agc through DLPack, with no copy: dlpack_numpy_test.py <path of libagc_dlpack_numpy.so>.

NumPy 1.24's np.from_dlpack takes an object with __dlpack__ / __dlpack_device__; its arrays'
__dlpack__ gives a PyCapsule named "dltensor", renamed "used_dltensor" once consumed.
"""
import ctypes
import gc
import sys

import numpy as np

lib = ctypes.PyDLL(sys.argv[1])  # PyDLL: calls (and the deleters they run) hold the GIL
lib.agc_py_export.restype = ctypes.c_void_p
lib.agc_py_export.argtypes = [ctypes.c_int, ctypes.c_int]
lib.agc_py_consume.restype = ctypes.c_double
lib.agc_py_consume.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]

capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
capsule_pointer.restype = ctypes.c_void_p
capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_set_name = ctypes.pythonapi.PyCapsule_SetName
capsule_set_name.restype = ctypes.c_int
capsule_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]


class AgcTensor:
    """What a Python binding of agc would return: the DLPack protocol over agc_py_export."""

    def __init__(self, managed):
        self.managed = managed

    def __dlpack__(self, stream=None):
        return capsule_new(self.managed, b"dltensor", None)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


def check(cond, what):
    if not cond:
        raise SystemExit("FAILED: " + what)


# agc -> NumPy: the array views agc's buffer; dropping it runs agc's deleter, which releases
# the tensor and so the buffer, once.
a = np.from_dlpack(AgcTensor(lib.agc_py_export(2, 3)))
check(a.shape == (2, 3) and a.dtype == np.float32, f"shape/dtype {a.shape} {a.dtype}")
check(a.tolist() == [[0, 0.5, 1], [1.5, 2, 2.5]], f"values {a.tolist()}")
check(lib.agc_py_released() == 0, "released while NumPy holds it")
b = a[1]  # a NumPy view keeps the agc tensor alive too
del a
gc.collect()
check(lib.agc_py_released() == 0 and b.tolist() == [1.5, 2, 2.5], "released under a NumPy view")
del b
gc.collect()
check(lib.agc_py_released() == 1, f"released {lib.agc_py_released()} times, expected once")


def consume(arr, hold=0):
    """Hands arr to agc as NumPy's own DLPack capsule; returns (sum, error, capsule)."""
    cap = arr.__dlpack__()
    err = ctypes.create_string_buffer(1024)
    s = lib.agc_py_consume(capsule_pointer(cap, b"dltensor"), hold, err, 1024)
    if not err.value:
        capsule_set_name(cap, b"used_dltensor")  # agc owns it now: the capsule must not delete it
    return s, err.value.decode(), cap


# NumPy -> agc: a Function reads the array in place; agc's reference is the DLPack deleter's.
x = np.arange(12, dtype=np.float64).reshape(3, 4)
refs = sys.getrefcount(x)
s, err, cap = consume(x, hold=1)
del cap
check(err == "" and s == 132.0, f"sum {s} {err}")
check(sys.getrefcount(x) == refs + 1, "agc should hold one reference to the array")
lib.agc_py_drop()
check(sys.getrefcount(x) == refs, "agc's deleter should have dropped its reference, once")

s, err, cap = consume(np.arange(5, dtype=np.int64))
check(err == "" and s == 20.0, f"int64 sum {s} {err}")

# A strided view would need a copy: a ValueError, and the capsule stays NumPy's (its own
# destructor then deletes it: no leak, no double free).
y = np.arange(12, dtype=np.float32).reshape(3, 4)
refs = sys.getrefcount(y)
s, err, cap = consume(y[:, ::2])
check("ValueError" in err and "not compact row-major" in err, f"strided: {err}")
del cap
gc.collect()
check(sys.getrefcount(y) == refs, "the rejected capsule leaked its array")
# The storage dtypes arrive as they are (images as uint8, weights as float16).
s, err, cap = consume(np.arange(5, dtype=np.uint8))
check(err == "" and s == 20.0, f"uint8 sum {s} {err}")
s, err, cap = consume(np.array([0.5, 1.5, 65504], dtype=np.float16))
check(err == "" and s == 131012.0, f"float16 sum {s} {err}")
s, err, cap = consume(np.zeros(3, dtype=np.int16))
check("TypeError" in err and "int16" in err, f"int16: {err}")
del cap
print("numpy <-> agc through DLPack: OK")

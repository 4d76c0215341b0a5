# The C bit generator behind a numpy Generator (numpy/random/_examples/cython pattern).
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from numpy.random cimport bitgen_t


cdef inline bitgen_t* generator_bitgen(object generator) except NULL:
    """Pointer to the generator's bitgen_t; the caller holds ``generator.bit_generator.lock``."""
    capsule = generator.bit_generator.capsule
    if not PyCapsule_IsValid(capsule, "BitGenerator"):
        raise TypeError("rng must be a numpy.random.Generator")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, "BitGenerator")

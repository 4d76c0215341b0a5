# OpenMP runtime calls for the kernels that use more than one core, with serial stand-ins when the
# compiler has no OpenMP (Apple's clang): results never depend on which is used.
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static void dps_set_num_threads(int n) { omp_set_num_threads(n); }
    static int dps_max_threads(void) { return omp_get_max_threads(); }
    static int dps_num_threads(void) { return omp_get_num_threads(); }
    static void dps_barrier(void) {
    #pragma omp barrier
    }
    #else
    static void dps_set_num_threads(int n) { (void)n; }
    static int dps_max_threads(void) { return 1; }
    static int dps_num_threads(void) { return 1; }
    static void dps_barrier(void) {}
    #endif
    """
    void dps_set_num_threads(int n) nogil
    int dps_max_threads() nogil
    int dps_num_threads() nogil       # threads in the current parallel region
    void dps_barrier() nogil          # every thread of the current parallel region waits here

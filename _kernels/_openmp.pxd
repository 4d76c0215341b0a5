# OpenMP runtime calls for the kernels that use more than one core, with serial stand-ins when the
# compiler has no OpenMP (Apple's clang): results never depend on which is used.
#
# Also the busy-machine guard of the block loops (docs/performance.md, "A busy machine"). A
# parallel region ends when every thread of its team has arrived, so a thread that the OS has
# descheduled (other processes hold the cores) delays the region by up to a time slice, however
# few blocks it would have taken. The guard times each region: when it took longer than the
# calling thread alone would have (its own rate over all the blocks), the next regions run on one
# thread for 16 times the time lost, doubling on each further loss up to 256 times, back to 16
# once a region gains. Waiting costs then at most 1/16 of the time, and an idle machine keeps both
# cores. The state is per module and only decides thread counts, which never change a result.
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int dps_has_openmp(void) { return 1; }
    static void dps_set_num_threads(int n) { omp_set_num_threads(n); }
    static int dps_max_threads(void) { return omp_get_max_threads(); }
    static int dps_num_threads(void) { return omp_get_num_threads(); }
    static int dps_thread_num(void) { return omp_get_thread_num(); }
    static double dps_wtime(void) { return omp_get_wtime(); }
    static void dps_barrier(void) {
    #pragma omp barrier
    }
    #else
    static int dps_has_openmp(void) { return 0; }
    static void dps_set_num_threads(int n) { (void)n; }
    static int dps_max_threads(void) { return 1; }
    static int dps_num_threads(void) { return 1; }
    static int dps_thread_num(void) { return 0; }
    static double dps_wtime(void) { return 0.0; }
    static void dps_barrier(void) {}
    #endif

    /* Shared words that one thread writes while another may read them (relaxed: they only steer
       thread counts and hand-offs that barriers order). */
    #if defined(__GNUC__) || defined(__clang__)
    static int dps_load_int(const int* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static void dps_store_int(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    static double dps_load_double(const double* p)
    { double v; __atomic_load(p, &v, __ATOMIC_RELAXED); return v; }
    static void dps_store_double(double* p, double v) { __atomic_store(p, &v, __ATOMIC_RELAXED); }
    #else
    static int dps_load_int(const int* p) { return *(const volatile int*) p; }
    static void dps_store_int(int* p, int v) { *(volatile int*) p = v; }
    static double dps_load_double(const double* p) { return *(const volatile double*) p; }
    static void dps_store_double(double* p, double v) { *(volatile double*) p = v; }
    #endif

    #define DPS_GUARD_MIN 16.0
    #define DPS_GUARD_MAX 256.0
    static double dps_serial_until = 0.0;      /* dps_wtime() before which regions run alone */
    static double dps_guard_factor = DPS_GUARD_MIN;

    typedef struct {
        double start, master_done;   /* region start; the calling thread's last block done */
        int master_blocks, threads;
    } dps_region;

    /* The threads for a region of blocks: 1 while the guard says so, else ``threads``. */
    static int dps_region_begin(dps_region* r, int threads)
    {
        r->master_blocks = 0;
        r->master_done = 0.0;
        r->start = 0.0;
        if (threads > 1) {
            r->start = dps_wtime();
            if (r->start < dps_load_double(&dps_serial_until))
                threads = 1;
        }
        r->threads = threads;
        return threads;
    }

    /* Called at the end of every block, by whichever thread ran it. */
    static void dps_region_block(dps_region* r)
    {
        if (r->threads > 1 && dps_thread_num() == 0) {
            r->master_done = dps_wtime();
            r->master_blocks++;
        }
    }

    /* After the region: compare its time with the calling thread's alone. */
    static void dps_region_end(dps_region* r, int blocks)
    {
        double end, alone, lost, factor;
        if (r->threads <= 1 || r->master_blocks == 0)
            return;
        end = dps_wtime();
        alone = (r->master_done - r->start) * blocks / r->master_blocks;
        lost = (end - r->start) - alone;
        factor = dps_load_double(&dps_guard_factor);
        if (lost > 0.0) {
            dps_store_double(&dps_serial_until, end + factor * lost);
            dps_store_double(&dps_guard_factor,
                             2.0 * factor < DPS_GUARD_MAX ? 2.0 * factor : DPS_GUARD_MAX);
        } else if (factor != DPS_GUARD_MIN) {
            dps_store_double(&dps_guard_factor, DPS_GUARD_MIN);
        }
    }
    """
    int dps_has_openmp() nogil        # 1 if compiled with OpenMP, else 0
    void dps_set_num_threads(int n) nogil
    int dps_max_threads() nogil
    int dps_num_threads() nogil       # threads in the current parallel region
    int dps_thread_num() nogil        # this thread's number in the current parallel region
    double dps_wtime() nogil          # seconds (omp_get_wtime; 0 without OpenMP)
    void dps_barrier() nogil          # every thread of the current parallel region waits here
    int dps_load_int(const int* p) nogil
    void dps_store_int(int* p, int v) nogil
    double dps_load_double(const double* p) nogil
    void dps_store_double(double* p, double v) nogil

    ctypedef struct dps_region:
        pass
    int dps_region_begin(dps_region* r, int threads) nogil
    void dps_region_block(dps_region* r) nogil
    void dps_region_end(dps_region* r, int blocks) nogil

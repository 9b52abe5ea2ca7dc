// gpuwhy launch-overhead kernels. empty_kernel does nothing, so every cost it shows is the
// launch itself (host submission, scheduling, the event or graph machinery).
// Launched as one block of one thread.

extern "C" __global__ void empty_kernel() {}

// Keeps the stream busy for about `ns` nanoseconds (one thread reading the
// global nanosecond timer). Enqueued before a timed region so the region's
// events and launches queue up behind it: the events then measure GPU time
// only, not the host's time to submit the region.
extern "C" __global__ void spin_kernel(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

#ifndef BEACOND_MALLOC_COUNTER_H
#define BEACOND_MALLOC_COUNTER_H
/// Heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc) made by this process so far.
unsigned long long beacond_allocation_count(void);
#endif

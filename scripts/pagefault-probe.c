// How fast this host maps fresh memory: times writing a buffer the first time (every page
// faults in) and again (pages already mapped), with 1 and N threads. A large gap between the
// two says freed buffers are worth keeping mapped between partitions.
//   gcc -O2 -pthread scripts/pagefault-probe.c -o /tmp/pf && /tmp/pf [GiB] [threads]
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

struct part { char *p; size_t n; };
static void *fill(void *a) {
    struct part *s = a;
    memset(s->p, 1, s->n);
    return NULL;
}

static double touch(char *p, size_t n, int threads) {
    pthread_t t[256];
    struct part s[256];
    double t0 = now();
    for (int i = 0; i < threads; i++) {
        s[i].p = p + n / threads * i;
        s[i].n = n / threads;
        pthread_create(&t[i], NULL, fill, &s[i]);
    }
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    return now() - t0;
}

int main(int argc, char **argv) {
    double gib = argc > 1 ? atof(argv[1]) : 2;
    int threads = argc > 2 ? atoi(argv[2]) : 16;
    size_t n = (size_t)(gib * (1 << 30));
    int counts[2] = {1, threads};
    for (int c = 0; c < 2; c++) {
        for (int round = 0; round < 2; round++) {
            char *p = malloc(n);
            double first = touch(p, n, counts[c]);
            double again = touch(p, n, counts[c]);
            free(p);
            printf("%d thread(s), %.1f GiB: first touch %.2f GB/s (%.0f ms), again %.2f GB/s (%.0f ms)\n",
                   counts[c], gib, n / first / 1e9, first * 1e3, n / again / 1e9, again * 1e3);
        }
    }
    return 0;
}

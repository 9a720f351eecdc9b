/* Probes of the host's loopback TCP stream, for docs/accuracy.md ("TCP_STREAM on the Milan
 * host"): run with scripts/probes/tcp-stream (it compiles this file with cc).
 *
 *   tcp_stream send-size   one thread, TCP_NODELAY: bursts of 4 sends then the receives that
 *                          drain them, 64 B and 16 KiB alternating for 40 rounds; the paired
 *                          difference of the 16 KiB and the 64 B send is what a 16 KiB message
 *                          costs the sender beyond a 64 B one (the copy and anything per byte).
 *   tcp_stream stream T|P  a 16 KiB stream for 2 s between two threads (T) or two processes (P,
 *                          as netperf and netserver are), unpinned: Mbit/s.
 *   tcp_stream reuse       two threads pinned to CPUs 0 and 1 take turns: one cache line
 *                          bounced between them (half a round trip), then 16 KiB memcpy'd into
 *                          a buffer the other CPU read last and memcpy'd out by that CPU, as a
 *                          loopback sender refills the page frag its receiver has just read.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BIG 16384
static char buf[65536], src[BIG], dst[BIG];
static char shared[BIG] __attribute__((aligned(4096)));
static int tx, rx;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}
static int cmp(const void *x, const void *y) {
    double d = *(const double *)x - *(const double *)y;
    return d < 0 ? -1 : d > 0;
}
static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    return v[n / 2];
}
static void die(const char *what) {
    perror(what);
    exit(1);
}
static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (pthread_setaffinity_np(pthread_self(), sizeof s, &s)) die("pin");
}
static void connect_pair(void) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
    socklen_t al = sizeof a;
    int one = 1, l = socket(AF_INET, SOCK_STREAM, 0);
    if (bind(l, (void *)&a, sizeof a) || listen(l, 1) || getsockname(l, (void *)&a, &al)) die("listen");
    tx = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(tx, (void *)&a, sizeof a)) die("connect");
    setsockopt(tx, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if ((rx = accept(l, 0, 0)) < 0) die("accept");
}

/* Median ns per send of `sz` bytes in bursts of 4 (then drained). */
static double send_ns(int sz) {
    enum { BURST = 4, N = 400 };
    static double t[N];
    for (int b = 0; b < N; b++) {
        double t0 = now();
        for (int i = 0; i < BURST; i++)
            if (send(tx, buf, sz, 0) != sz) die("send");
        t[b] = (now() - t0) / BURST;
        for (int got = 0; got < BURST * sz;) {
            int n = recv(rx, buf, sizeof buf, MSG_DONTWAIT);
            if (n <= 0) die("recv");
            got += n;
        }
    }
    return median(t, N);
}

static void send_size(void) {
    enum { R = 40 };
    double small[R], big[R], diff[R];
    connect_pair();
    for (int r = 0; r < R; r++) {
        small[r] = send_ns(64);
        big[r] = send_ns(BIG);
        diff[r] = big[r] - small[r];
    }
    printf("send 64 B %.0f ns, 16 KiB %.0f ns; paired difference %.0f ns\n", median(small, R), median(big, R), median(diff, R));
}

static volatile int stop;
static long sent;
static void *sender(void *_) {
    while (!stop) {
        for (int off = 0; off < BIG;) {
            int n = write(tx, buf + off, BIG - off);
            if (n <= 0) die("write");
            off += n;
        }
        sent += BIG;
    }
    return 0;
}
static void *receiver(void *_) {
    while (read(rx, dst, BIG) > 0) {}
    return 0;
}
static void stream(int processes) {
    connect_pair();
    pthread_t s, r;
    pid_t child = -1;
    if (processes) {
        if ((child = fork()) == 0) {
            close(tx);
            receiver(0);
            _exit(0);
        }
        close(rx);
    } else {
        pthread_create(&r, 0, receiver, 0);
    }
    pthread_create(&s, 0, sender, 0);
    sleep(2);
    stop = 1;
    pthread_join(s, 0);
    shutdown(tx, SHUT_WR);
    if (processes) waitpid(child, 0, 0); else pthread_join(r, 0);
    printf("16 KiB stream between two %s: %.0f Mbit/s\n", processes ? "processes" : "threads", sent * 8 / 2.0 / 1e6);
}

/* Turns on the shared buffer, and hand-offs of the bounced line (half a round trip each). */
enum { TURNS = 20000, BOUNCES = 2000000 };
static atomic_long turn;
static double t_write[TURNS], t_read[TURNS];
static void *reuse_reader(void *_) {
    pin(1);
    for (long i = 0; i < TURNS; i++) {
        while (atomic_load(&turn) != 2 * i + 1) {}
        double t0 = now();
        memcpy(dst, shared, BIG);
        t_read[i] = now() - t0;
        __asm__ volatile("" ::"r"(dst) : "memory");
        atomic_store(&turn, 2 * i + 2);
    }
    return 0;
}
static void *line_pong(void *_) {
    pin(1);
    for (long i = 1; i < BOUNCES; i += 2) {
        while (atomic_load(&turn) != i) {}
        atomic_store(&turn, i + 1);
    }
    return 0;
}
static void reuse(void) {
    pthread_t t;
    pin(0);
    atomic_store(&turn, 0);
    pthread_create(&t, 0, line_pong, 0);
    double t0 = now();
    for (long i = 0; i < BOUNCES; i += 2) {
        while (atomic_load(&turn) != i) {}
        atomic_store(&turn, i + 1);
    }
    double line = (now() - t0) / BOUNCES;
    pthread_join(t, 0);
    memset(src, 3, BIG);
    atomic_store(&turn, 0);
    pthread_create(&t, 0, reuse_reader, 0);
    for (long i = 0; i < TURNS; i++) {
        while (atomic_load(&turn) != 2 * i) {}
        double t1 = now();
        memcpy(shared, src, BIG);
        t_write[i] = now() - t1;
        __asm__ volatile("" ::"r"(shared) : "memory");
        atomic_store(&turn, 2 * i + 1);
    }
    pthread_join(t, 0);
    printf("line %.0f ns; 16 KiB write after the other CPU's read %.0f ns, its read after the write %.0f ns\n", line, median(t_write, TURNS), median(t_read, TURNS));
}

int main(int argc, char **argv) {
    memset(buf, 1, sizeof buf);
    if (argc > 1 && !strcmp(argv[1], "send-size")) send_size();
    else if (argc > 2 && !strcmp(argv[1], "stream")) stream(argv[2][0] == 'P');
    else if (argc > 1 && !strcmp(argv[1], "reuse")) reuse();
    else {
        fprintf(stderr, "usage: tcp_stream send-size | stream T|P | reuse\n");
        return 2;
    }
    return 0;
}

/* wakesim record's lock log: an LD_PRELOAD library that logs a program's pthread mutex and
 * condition variable calls (docs/record.md, "Mutexes"). Built by crates/cli/build.rs and
 * embedded in wakesim; `record` writes it out and preloads it into the recorded command.
 *
 * A free mutex is taken and released in user space, so tracefs never sees it; only these calls
 * say where a task's critical sections are. Each call appends one fixed-size record, with
 * CLOCK_MONOTONIC (tracefs's `mono` clock) nanoseconds, to a file that every process of the
 * command maps shared (WAKESIM_LOCKLOG names it; `record` creates it, sparse, with its header).
 * Cost per call: a vDSO clock read, a vDSO getcpu and an atomic add, tens of ns; no syscall
 * and no trap (uprobes cost ~10 µs a hit in a KVM guest, which changes the program).
 *
 * Calls made inside glibc (its own internal locks) do not go through these symbols and are
 * not logged; neither are programs that do not use the dynamic glibc (static binaries, Go).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Keep in step with crates/cli/src/record/locklog.rs. */
#define MAGIC 0x676f6c6b636f6c77ULL /* "wlocklog" */
enum { OP_LOCK = 1, OP_UNLOCK = 2, OP_COND_WAIT = 3, OP_COND_WAIT_RET = 4 };
struct header { uint64_t magic, next, cap, lost; };
struct rec { uint64_t ts; uint32_t pid, tid, op, cpu; uint64_t a, b; };

static struct header *hdr;
static struct rec *recs;
static __thread uint32_t my_tid;
static uint32_t my_pid;

static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static int (*real_timedlock)(pthread_mutex_t *, const struct timespec *);
static int (*real_unlock)(pthread_mutex_t *);
static int (*real_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

/* In a forked child: its pid and its one thread's tid are new. */
static void forget_tid(void)
{
	my_tid = 0;
	my_pid = (uint32_t)getpid();
}

/* The condvar calls have two versions in glibc; the default one is GLIBC_2.3.2 on x86-64
 * (plain dlsym would return the old 2.2.5 one). */
static void *next_sym(const char *name, const char *version)
{
	void *p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
	return p ? p : dlsym(RTLD_NEXT, name);
}

__attribute__((constructor)) static void lock_log_init(void)
{
	real_lock = next_sym("pthread_mutex_lock", NULL);
	real_trylock = next_sym("pthread_mutex_trylock", NULL);
	real_timedlock = next_sym("pthread_mutex_timedlock", NULL);
	real_unlock = next_sym("pthread_mutex_unlock", NULL);
	real_cond_wait = next_sym("pthread_cond_wait", "GLIBC_2.3.2");
	real_cond_timedwait = next_sym("pthread_cond_timedwait", "GLIBC_2.3.2");
	my_pid = (uint32_t)getpid();
	pthread_atfork(NULL, NULL, forget_tid);
	const char *path = getenv("WAKESIM_LOCKLOG");
	if (!path)
		return;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(struct header)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	void *m = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED || ((struct header *)m)->magic != MAGIC)
		return;
	hdr = m;
	recs = (struct rec *)(hdr + 1);
}

static void log_op(uint32_t op, const void *a, const void *b, uint64_t ts)
{
	if (!hdr)
		return;
	uint64_t i = __atomic_fetch_add(&hdr->next, 1, __ATOMIC_RELAXED);
	if (i >= hdr->cap) {
		__atomic_fetch_add(&hdr->lost, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	int cpu = sched_getcpu();
	struct rec *r = &recs[i];
	r->pid = my_pid;
	r->tid = my_tid;
	r->op = op;
	r->cpu = cpu < 0 ? 0 : (uint32_t)cpu;
	r->a = (uint64_t)(uintptr_t)a;
	r->b = (uint64_t)(uintptr_t)b;
	/* The timestamp last, with release order: a reader takes a record with ts 0 as unwritten. */
	__atomic_store_n(&r->ts, ts, __ATOMIC_RELEASE);
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	log_op(OP_LOCK, m, NULL, now_ns());
	return real_lock(m);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	uint64_t ts = now_ns();
	int r = real_trylock(m);
	if (r == 0)
		log_op(OP_LOCK, m, NULL, ts);
	return r;
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	uint64_t ts = now_ns();
	int r = real_timedlock(m, abstime);
	if (r == 0)
		log_op(OP_LOCK, m, NULL, ts);
	return r;
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	log_op(OP_UNLOCK, m, NULL, now_ns());
	return real_unlock(m);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	log_op(OP_COND_WAIT, c, m, now_ns());
	int r = real_cond_wait(c, m);
	log_op(OP_COND_WAIT_RET, c, m, now_ns());
	return r;
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
	log_op(OP_COND_WAIT, c, m, now_ns());
	int r = real_cond_timedwait(c, m, abstime);
	log_op(OP_COND_WAIT_RET, c, m, now_ns());
	return r;
}

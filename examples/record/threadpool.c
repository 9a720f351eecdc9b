/* A futex thread pool, for `wakesim record` (docs/record.md): one producer thread hands JOBS
 * jobs to WORKERS threads through a bounded queue (a pthread mutex and two condition variables,
 * i.e. futexes). The producer computes a little per job and blocks while the queue is full;
 * workers block while it is empty and compute SPIN iterations per job.
 *
 *   gcc -O2 -pthread -o threadpool examples/record/threadpool.c
 *   ./threadpool [WORKERS=4] [JOBS=20000] [SPIN=20000] [QUEUE=8]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER, not_full = PTHREAD_COND_INITIALIZER;
static long queued, done_jobs, jobs, spin, qcap;
static int closed;

static unsigned long work(long n, unsigned long x)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static void *worker(void *arg)
{
	unsigned long x = (unsigned long)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		while (queued == 0 && !closed)
			pthread_cond_wait(&not_empty, &lock);
		if (queued == 0 && closed) {
			pthread_mutex_unlock(&lock);
			break;
		}
		queued--;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&lock);
		x = work(spin, x);
		__atomic_add_fetch(&done_jobs, 1, __ATOMIC_RELAXED);
	}
	return (void *)x;
}

int main(int argc, char **argv)
{
	int nw = argc > 1 ? atoi(argv[1]) : 4;
	jobs = argc > 2 ? atol(argv[2]) : 20000;
	spin = argc > 3 ? atol(argv[3]) : 20000;
	qcap = argc > 4 ? atol(argv[4]) : 8;
	pthread_t *t = calloc(nw, sizeof(*t));
	for (int i = 0; i < nw; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)(i + 1));
	unsigned long x = 7;
	for (long j = 0; j < jobs; j++) {
		x = work(spin / 4, x);
		pthread_mutex_lock(&lock);
		while (queued >= qcap)
			pthread_cond_wait(&not_full, &lock);
		queued++;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&lock);
	}
	pthread_mutex_lock(&lock);
	closed = 1;
	pthread_cond_broadcast(&not_empty);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < nw; i++)
		pthread_join(t[i], NULL);
	printf("%ld jobs done by %d workers (%lu)\n", done_jobs, nw, x & 1);
	return 0;
}

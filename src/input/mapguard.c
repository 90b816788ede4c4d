/* mapguard.c - a capture file that shrinks while it is mapped and read (a
 * writer still copying it, a log rotated) must not kill the process with
 * SIGBUS. Each mapping is registered; on SIGBUS inside one, the pages from
 * the fault to its end become zero pages (an anonymous mapping over them)
 * and the mapping is marked shrunk: the reader goes on over zeros, and the
 * loader then reports the file, not what it made of the zeros. A SIGBUS
 * anywhere else takes its default action.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "input_impl.h"

#define GUARD_SLOTS 256

static struct {
	_Atomic uintptr_t base; /* 0: free */
	_Atomic size_t len;
	atomic_int shrank;
} slots[GUARD_SLOTS];

static uintptr_t page_size;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	(void)uc;
	for (size_t i = 0; i < GUARD_SLOTS; i++) {
		uintptr_t base = atomic_load_explicit(&slots[i].base, memory_order_acquire);
		size_t len = atomic_load_explicit(&slots[i].len, memory_order_relaxed);

		if (base > 1 && a >= base && a < base + len) {
			uintptr_t start = a & ~(page_size - 1);
			void *r = mmap((void *)start, base + len - start, PROT_READ,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

			if (r != MAP_FAILED) {
				atomic_store(&slots[i].shrank, 1);
				return; /* the access is made again, on zeros */
			}
			break;
		}
	}
	/* not a capture's pages: what SIGBUS would have done */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install(void)
{
	struct sigaction sa;

	page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

int tfd_mapguard_add(const void *base, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, install);
	for (int i = 0; i < GUARD_SLOTS; i++) {
		uintptr_t free_slot = 0;

		/* taken (1: not a mapping yet), then filled, then published */
		if (atomic_compare_exchange_strong(&slots[i].base, &free_slot, (uintptr_t)1)) {
			atomic_store(&slots[i].shrank, 0);
			atomic_store_explicit(&slots[i].len, len, memory_order_relaxed);
			atomic_store_explicit(&slots[i].base, (uintptr_t)base,
					      memory_order_release);
			return i;
		}
	}
	return -1; /* every slot taken: this one is not guarded */
}

bool tfd_mapguard_remove(int slot)
{
	bool shrank;

	if (slot < 0 || slot >= GUARD_SLOTS)
		return false;
	shrank = atomic_exchange(&slots[slot].shrank, 0) != 0;
	atomic_store(&slots[slot].base, (uintptr_t)0);
	return shrank;
}

bool tfd_mapguard_shrank(int slot)
{
	return slot >= 0 && slot < GUARD_SLOTS && atomic_load(&slots[slot].shrank) != 0;
}

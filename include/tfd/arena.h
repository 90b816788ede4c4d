/* arena.h - bump allocator and string interning.
 *
 * Everything allocated from an arena lives until tfd_arena_free(); nothing is
 * freed on its own. Interned strings are unique per arena, so two interned
 * names compare equal iff their pointers are equal.
 */
#ifndef TFD_ARENA_H
#define TFD_ARENA_H

#include <stddef.h>
#include <stdint.h>

struct tfd_arena_chunk;

struct tfd_arena {
	struct tfd_arena_chunk *head;
	size_t next_size;
	size_t bytes; /* total bytes handed out, for diagnostics */
	/* interning table (open addressing over const char *) */
	const char **slots;
	size_t nslots, nused;
};

/* An empty arena (no chunk yet); cannot fail. */
void tfd_arena_init(struct tfd_arena *a);
/* Free every chunk; the arena may be reused after tfd_arena_init(). */
void tfd_arena_release(struct tfd_arena *a);
/* The same, its chunks kept for the next arenas to grow into (up to 256 MB
 * of them, shared by the threads): an arena made and dropped over and
 * over (a merge's parsed partials, one after another) then reuses pages
 * already mapped, where freed chunks had come back from the kernel zeroed,
 * three times the system time of the merge. */
void tfd_arena_recycle(struct tfd_arena *a);
/* Everything the arena handed out is dead: its newest chunk is kept,
 * empty, the others freed (a scratch arena reused message by message).
 * Interned strings must not have been made in it. */
void tfd_arena_rewind(struct tfd_arena *a);
/* The bytes of chunks tfd_arena_recycle() keeps now. */
size_t tfd_arena_spare_bytes(void);
/* 16-byte aligned, zeroed memory owned by the arena. Aborts on OOM. */
void *tfd_arena_alloc(struct tfd_arena *a, size_t n);
/* Copy of s[0..len) with a NUL, owned by the arena (not interned). */
char *tfd_arena_strndup(struct tfd_arena *a, const char *s, size_t len);
/* The unique interned copy of s[0..len). */
const char *tfd_arena_intern(struct tfd_arena *a, const char *s, size_t len);
/* The same for a NUL-terminated s. */
const char *tfd_arena_intern_cstr(struct tfd_arena *a, const char *s);

#endif

/* dl.h - a shared library loaded on first use (dlopen), for the
 * dependencies only some commands need: Graphviz (diagrams), SQLite (the
 * report history) and libpq (a PostgreSQL history). The other commands
 * never map them: no start-up cost (their symbol lookups, their pages in
 * the RSS), and a machine without them still runs the rest.
 */
#ifndef TFD_DL_H
#define TFD_DL_H

#include <stdbool.h>
#include <stddef.h>

/* A symbol to resolve and where its address goes. */
struct tfd_dl_sym {
	const char *name;
	void **slot;
};

/* Load the library soname (never unloaded) and resolve each of the n
 * symbols into its slot: true, or false with why (dlerror()'s line, or
 * the symbol it lacks; whylen bytes at most) and the slots undefined.
 * Call it once per library (pthread_once). */
bool tfd_dl_load(const char *soname, const struct tfd_dl_sym *syms, size_t n, char *why,
		 size_t whylen);

#endif

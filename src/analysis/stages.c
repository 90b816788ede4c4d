/* stages.c - the stages of a pipeline from its iterators: iterators with
 * one parent stage and one stage path (the long name less the indices that
 * number instances, model/graph.c) are one stage; and the stage tree's
 * pre-order. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/graph.h"
#include "tfd/imap.h"

static uint64_t stage_key(int parent, const char *path)
{
	return imap_hash(tfd_fnv_text(TFD_FNV_BASIS, path) ^ (uint64_t)(int64_t)parent);
}

/* The order of two long names of one stage, which differ only in the
 * numbers of their instances ("Interleave[12]::Map", "Interleave[3]::Map"):
 * number by number, as numbers. */
static int instance_cmp(const char *a, const char *b)
{
	for (;;) {
		const char *x = a, *y = b;

		while (*a && *a == *b && !isdigit((unsigned char)*a)) {
			a++;
			b++;
		}
		if (!isdigit((unsigned char)*a) || !isdigit((unsigned char)*b))
			return (unsigned char)*a < (unsigned char)*b   ? -1
			       : (unsigned char)*a > (unsigned char)*b ? 1
								       : 0;
		while (*a == '0' && isdigit((unsigned char)a[1]))
			a++;
		while (*b == '0' && isdigit((unsigned char)b[1]))
			b++;
		for (x = a; isdigit((unsigned char)*x); x++)
			;
		for (y = b; isdigit((unsigned char)*y); y++)
			;
		if (x - a != y - b)
			return x - a < y - b ? -1 : 1;
		for (; a < x; a++, b++)
			if (*a != *b)
				return *a < *b ? -1 : 1;
	}
}

int tfd_stage_for(struct host_ctx *c, struct stage_build *sb, int iter, int depth_guard)
{
	struct iter *it = &c->iters.v[iter];
	char *path;
	int parent_stage = -1;
	struct tfd_stage st;
	char fam[128];
	uint64_t key;
	size_t head;

	if (it->stage >= 0)
		return it->stage;
	if (it->parent >= 0 && depth_guard < 10000)
		parent_stage = tfd_stage_for(c, sb, it->parent, depth_guard + 1);
	path = tfd_iter_stage_path(it->long_name);
	key = stage_key(parent_stage, path);
	if (imap_get(&sb->index, key, &head))
		for (int s = (int)head; s >= 0; s = sb->next.v[s])
			if (sb->stages.v[s].parent == parent_stage &&
			    strcmp(sb->paths.v[s], path) == 0) {
				free(path);
				it->stage = s;
				sb->stages.v[s].niterators++;
				/* a stage of several instances is named after its
				 * lowest, whichever the threads' order met first */
				if (instance_cmp(it->long_name, sb->stages.v[s].long_name) < 0)
					sb->stages.v[s].long_name = it->long_name;
				return it->stage;
			}
	memset(&st, 0, sizeof(st));
	st.long_name = it->long_name;
	st.name = tfd_iter_short(it->long_name);
	st.parent = parent_stage;
	st.depth = parent_stage >= 0 ? sb->stages.v[parent_stage].depth + 1 : 0;
	tfd_iter_family(st.name, fam, sizeof(fam));
	st.family = NULL; /* set when the pipeline is finished (needs stable storage) */
	st.is_async = tfd_family_is_async(fam);
	st.is_device_generator = tfd_graph_is_device_generator(c, iter);
	st.niterators = 1;
	vec_push(&sb->stages, st);
	vec_push(&sb->paths, path);
	vec_push(&sb->next, imap_get(&sb->index, key, &head) ? (int)head : -1);
	it->stage = (int)(sb->stages.n - 1);
	imap_put(&sb->index, key, (size_t)it->stage);
	return it->stage;
}

void tfd_stage_build_release(struct stage_build *sb)
{
	for (size_t i = 0; i < sb->paths.n; i++)
		free(sb->paths.v[i]);
	vec_free(&sb->paths);
	vec_free(&sb->stages);
	vec_free(&sb->next);
	imap_free(&sb->index);
}

/* Pre-order of the stage tree, children by first appearance (iterative:
 * hostile captures can chain thousands of stages). */
static void stage_preorder(const struct tfd_stage *st, size_t n, int root, int *order, size_t *k)
{
	int *first = xmalloc((n + 1) * sizeof(int)), *next = xmalloc((n + 1) * sizeof(int));
	int *last = xmalloc((n + 1) * sizeof(int));
	VEC(int) stack = {0};

	for (size_t i = 0; i < n; i++)
		first[i] = last[i] = next[i] = -1;
	for (size_t i = 0; i < n; i++) {
		int p = st[i].parent;

		if (p < 0)
			continue;
		if (last[p] < 0)
			first[p] = (int)i;
		else
			next[last[p]] = (int)i;
		last[p] = (int)i;
	}
	vec_push(&stack, root);
	while (stack.n) {
		int x = stack.v[--stack.n];
		size_t mark = stack.n;

		order[(*k)++] = x;
		for (int ch = first[x]; ch >= 0; ch = next[ch])
			vec_push(&stack, ch);
		/* reverse the children just pushed so the first is visited first */
		for (size_t a = mark, b = stack.n; a + 1 < b; a++, b--) {
			int t = stack.v[a];

			stack.v[a] = stack.v[b - 1];
			stack.v[b - 1] = t;
		}
	}
	vec_free(&stack);
	free(first);
	free(next);
	free(last);
}

void tfd_stage_order(const struct tfd_stage *st, size_t n, int root, int *order)
{
	size_t k = 0;
	bool *seen = xcalloc(n + 1, sizeof(bool));

	stage_preorder(st, n, root, order, &k);
	for (size_t j = 0; j < k; j++)
		seen[order[j]] = true;
	for (size_t i = 0; i < n; i++)
		if (!seen[i])
			order[k++] = (int)i;
	free(seen);
}

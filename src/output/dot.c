/* dot.c - pipeline diagrams; the only user of cgraph and gvc.
 *
 * Graphviz is loaded with dlopen() on the first diagram: the commands
 * that draw none (analyze without --dot, the history, merge) do not map
 * its seven libraries at every start (0.54 MB of RSS and their symbol
 * lookups, against an idle process of 3.1 MB), and a machine without
 * libgvc6 still runs everything else.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include "tfd/buf.h"
#include "tfd/dl.h"
#include "tfd/dot.h"
#include "tfd/imap.h"
#include "tfd/render.h"
#include "tfd/satmath.h"

/* the Graphviz functions used (cgraph's come with libgvc), resolved once */
static struct {
	int (*safeset)(void *, char *, char *, char *);
	Agraph_t *(*subg)(Agraph_t *, char *, int);
	Agnode_t *(*node)(Agraph_t *, char *, int);
	char *(*strdup_html)(Agraph_t *, char *);
	Agraph_t *(*open)(char *, Agdesc_t, Agdisc_t *);
	const Agdesc_t *directed;
	Agsym_t *(*attr)(Agraph_t *, int, char *, char *);
	Agedge_t *(*edge)(Agraph_t *, Agnode_t *, Agnode_t *, char *, int);
	agusererrf (*seterrf)(agusererrf);
	agerrlevel_t (*seterr)(agerrlevel_t);
	int (*close)(Agraph_t *);
	int (*write)(Agraph_t *, void *);
	GVC_t *(*context)(void);
	int (*layout)(GVC_t *, graph_t *, const char *);
	int (*render_data)(GVC_t *, graph_t *, const char *, char **, unsigned int *);
	void (*free_render_data)(char *);
	int (*free_layout)(GVC_t *, graph_t *);
	int (*free_context)(GVC_t *);
	bool loaded;
	char why[256];
} gv;
static pthread_once_t gv_once = PTHREAD_ONCE_INIT;

static void gv_load(void)
{
	const struct tfd_dl_sym fns[] = {
	    {"agsafeset", (void **)&gv.safeset},
	    {"agsubg", (void **)&gv.subg},
	    {"agnode", (void **)&gv.node},
	    {"agstrdup_html", (void **)&gv.strdup_html},
	    {"agopen", (void **)&gv.open},
	    {"Agdirected", (void **)&gv.directed},
	    {"agattr", (void **)&gv.attr},
	    {"agedge", (void **)&gv.edge},
	    {"agseterrf", (void **)&gv.seterrf},
	    {"agseterr", (void **)&gv.seterr},
	    {"agclose", (void **)&gv.close},
	    {"agwrite", (void **)&gv.write},
	    {"gvContext", (void **)&gv.context},
	    {"gvLayout", (void **)&gv.layout},
	    {"gvRenderData", (void **)&gv.render_data},
	    {"gvFreeRenderData", (void **)&gv.free_render_data},
	    {"gvFreeLayout", (void **)&gv.free_layout},
	    {"gvFreeContext", (void **)&gv.free_context},
	};

	gv.loaded =
	    tfd_dl_load("libgvc.so.6", fns, sizeof(fns) / sizeof(fns[0]), gv.why, sizeof(gv.why));
}

#define agsafeset gv.safeset
#define agsubg gv.subg
#define agnode gv.node
#define agstrdup_html gv.strdup_html
#define agopen gv.open
#define Agdirected (*gv.directed)
#define agattr gv.attr
#define agedge gv.edge
#define agseterrf gv.seterrf
#define agseterr gv.seterr
#define agclose gv.close
#define agwrite gv.write
#define gvContext gv.context
#define gvLayout gv.layout
#define gvRenderData gv.render_data
#define gvFreeRenderData gv.free_render_data
#define gvFreeLayout gv.free_layout
#define gvFreeContext gv.free_context

static char last_gv_error[256];

/* Graphviz reports problems through agerr; keep the message for our one
 * error line instead of letting it print. */
static int gv_err(char *msg)
{
	size_t n;

	snprintf(last_gv_error, sizeof(last_gv_error), "%s", msg);
	n = strlen(last_gv_error);
	while (n && (last_gv_error[n - 1] == '\n' || last_gv_error[n - 1] == ' '))
		last_gv_error[--n] = '\0';
	return 0;
}

/* Every attribute value passes here: names come from the capture, and a
 * control byte would reach a terminal (DOT) or make the SVG invalid XML. */
static void set(void *obj, const char *k, const char *v)
{
	struct tfd_buf b;

	tfd_buf_init(&b);
	tfd_buf_puts(&b, v);
	tfd_buf_escape_controls(&b);
	agsafeset(obj, (char *)k, b.len ? b.s : (char *)"", (char *)"");
	tfd_buf_release(&b);
}

/* "\nparallelism 8, buffer 2" from the stage's configuration */
static void stage_params(const struct tfd_stage *s, char *buf, size_t len)
{
	static const char *const keys[] = {"parallelism", "cycle_length", "batch_size",
					   "buffer_limit", "buffer_size"};
	static const char *const shown[] = {"parallelism", "cycle", "batch", "buffer", "buffer"};
	size_t l = 0;

	buf[0] = '\0';
	for (size_t i = 0; s->sample && i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = tfd_event_param(s->sample, keys[i]);

		if (!v || l + 2 >= len)
			continue;
		if (strcmp(keys[i], "parallelism") == 0 && strcmp(v, "-1") == 0)
			v = "AUTOTUNE";
		l += (size_t)snprintf(buf + l, len - l, "%s%s %s", l ? ", " : "\\n", shown[i], v);
		if (l >= len)
			l = len - 1;
	}
}

/* A name from the capture as DOT text: its backslashes doubled, so that a
 * name ending in one cannot escape the closing quote (and swallow the next
 * statement) and a "\n" in a name is not read as a line break. Cut at len
 * (a label, shown whole in the tooltip). */
static const char *dot_text(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 2 < len; s++) {
		if (*s == '\\')
			out[o++] = '\\';
		out[o++] = *s;
	}
	out[o] = '\0';
	return out;
}

/* "Map #2" when another stage of the pipeline has the same short name (in
 * pre-order: #1 is the outer one); the tooltip has the long name. */
static void shown_name(const struct tfd_pipeline *p, size_t i, char *buf, size_t len)
{
	size_t same = 0, k = 0;

	for (size_t j = 0; j < p->nstages; j++)
		if (strcmp(p->stages[j].name, p->stages[i].name) == 0) {
			same++;
			if (j <= i)
				k++;
		}
	dot_text(p->stages[i].name, buf, len);
	if (same > 1) {
		size_t l = strlen(buf);

		snprintf(buf + l, len - l, " #%zu", k);
	}
}

/* A legend box (an HTML-like table) instead of a caption line. */
static void legend(Agraph_t *g, bool bound)
{
	Agraph_t *lg = agsubg(g, (char *)"cluster_legend", 1);
	Agnode_t *n = agnode(lg, (char *)"legend", 1);
	char html[1600];

	agsafeset(lg, (char *)"label", (char *)"legend", (char *)"");
	agsafeset(lg, (char *)"style", (char *)"rounded", (char *)"");
	agsafeset(lg, (char *)"color", (char *)"gray60", (char *)"");
	snprintf(html, sizeof(html),
		 "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"4\" CELLPADDING=\"4\">"
		 "<TR><TD COLOR=\"%s\" BORDER=\"3\">%s</TD></TR>"
		 "<TR><TD BGCOLOR=\"0.08 0.85 1.000\">threads busy (white: idle, orange: "
		 "saturated)</TD></TR>"
		 "<TR><TD BORDER=\"3\">critical path (latency view)</TD></TR>"
		 "<TR><TD STYLE=\"dashed\" COLOR=\"gray\">other stages</TD></TR>"
		 "<TR><TD COLOR=\"#3465a4\" STYLE=\"dashed\">async edge: the input runs on "
		 "other threads</TD></TR></TABLE>",
		 bound ? "red" : "gray40",
		 bound ? "the bottleneck: limits throughput"
		       : "the slowest stage (the host is not input-bound)");
	agsafeset(n, (char *)"shape", (char *)"plaintext", (char *)"");
	agsafeset(n, (char *)"label", agstrdup_html(g, html), (char *)"");
	agsafeset(n, (char *)"style", (char *)"", (char *)"");
	agsafeset(n, (char *)"color", (char *)"black", (char *)"");
	agsafeset(n, (char *)"fillcolor", (char *)"white", (char *)"");
}

/* The graph's title (host, pipeline, verdict) and attribute defaults. */
static Agraph_t *open_graph(const struct tfd_host_result *h, const struct tfd_pipeline *p,
			    size_t nnodes)
{
	Agraph_t *g = agopen((char *)"pipeline", Agdirected, NULL);
	char title[1024], verdict[96], t1[32], hn[256], pn[128], ln[384];

	if (isnan(h->input_pct))
		snprintf(verdict, sizeof(verdict), "input-bound share unknown");
	else if (h->has_device)
		/* which part of the input time dominates: copies or the wait */
		snprintf(verdict, sizeof(verdict), "%s input-bound (%.1f%%: %.1f%% %s, %.1f%% %s)",
			 h->bound == TFD_BOUND_HIGH	  ? "HIGHLY"
			 : h->bound == TFD_BOUND_MODERATE ? "MODERATELY"
							  : "NOT",
			 h->input_pct, tfd_h2d_dominates(h) ? tfd_h2d_pct(h) : tfd_host_wait_pct(h),
			 tfd_h2d_dominates(h) ? "copying to the device" : "waiting",
			 tfd_h2d_dominates(h) ? tfd_host_wait_pct(h) : tfd_h2d_pct(h),
			 tfd_h2d_dominates(h) ? "waiting" : "copying to the device");
	else
		snprintf(verdict, sizeof(verdict), "%s input-bound (%.1f%% waiting)",
			 h->bound == TFD_BOUND_HIGH	  ? "HIGHLY"
			 : h->bound == TFD_BOUND_MODERATE ? "MODERATELY"
							  : "NOT",
			 h->input_pct);
	snprintf(title, sizeof(title), "%s %s (%s): %s; %" PRIu64 " root call%s, max %s",
		 dot_text(h->host->name, hn, sizeof(hn)), dot_text(p->name, pn, sizeof(pn)),
		 dot_text(p->stages[0].long_name, ln, sizeof(ln)), verdict, p->ncalls,
		 p->ncalls == 1 ? "" : "s", tfd_fmt_ns(p->max_ns, t1, sizeof(t1)));
	if (nnodes < p->nstages) {
		size_t l = strlen(title);

		snprintf(title + l, sizeof(title) - l,
			 "\\n%zu stages drawn as %zu nodes: above %d stages, siblings of a "
			 "family and chains are collapsed",
			 p->nstages, nnodes, TFD_DOT_MAX_NODES);
	}
	set(g, "label", title);
	set(g, "labelloc", "t");
	set(g, "rankdir", "TB");
	set(g, "fontname", "Helvetica");
	agattr(g, AGNODE, (char *)"shape", (char *)"box");
	agattr(g, AGNODE, (char *)"fontname", (char *)"Helvetica");
	agattr(g, AGNODE, (char *)"style", (char *)"");
	agattr(g, AGNODE, (char *)"color", (char *)"black");
	agattr(g, AGNODE, (char *)"penwidth", (char *)"1");
	agattr(g, AGNODE, (char *)"fillcolor", (char *)"white");
	agattr(g, AGEDGE, (char *)"fontname", (char *)"Helvetica");
	agattr(g, AGEDGE, (char *)"style", (char *)"");
	agattr(g, AGEDGE, (char *)"color", (char *)"black");
	agattr(g, AGEDGE, (char *)"penwidth", (char *)"1");
	agattr(g, AGEDGE, (char *)"label", (char *)"");
	return g;
}

/* Stage i's work and function lines (the capacity model's) into extra;
 * returns how busy its threads are (0 to 1, for the fill). */
static double stage_work(const struct tfd_pipeline *p, size_t i, char *extra, size_t len)
{
	const struct tfd_stage *s = &p->stages[i];
	const struct tfd_segment *sg =
	    s->segment >= 0 && p->capacity.valid ? &p->segments[s->segment] : NULL;
	const struct tfd_segment *fg;
	double util = sg ? fmin(1.0, sg->utilization) : 0;
	char t1[32];

	stage_params(s, extra, len);
	if (sg && s->work_ns && s->window_calls) {
		size_t l = strlen(extra);

		snprintf(extra + l, len - l, "\\nwork %s/call, threads %.0f%% busy",
			 tfd_fmt_ns(s->work_ns / (int64_t)s->window_calls, t1, sizeof(t1)),
			 100 * sg->utilization);
	}
	fg = p->capacity.valid ? tfd_stage_function_segment(p, (int)i) : NULL;
	if (fg) {
		size_t l = strlen(extra);

		if (fg->known && s->fn_calls)
			snprintf(extra + l, len - l,
				 "\\nfunction %s/call, %.3g worker%s %.0f%% busy",
				 tfd_fmt_ns(s->fn_work_ns / (int64_t)s->fn_calls, t1, sizeof(t1)),
				 fg->parallelism, fg->parallelism == 1 ? "" : "s",
				 100 * fg->utilization);
		else
			snprintf(extra + l, len - l, "\\nfunction work not captured");
		util = fmin(1.0, fg->known ? fg->utilization : 0);
	}
	{
		char ops[160];
		size_t l = strlen(extra);

		if (tfd_fn_ops_summary(s, 2, ops, sizeof(ops)))
			snprintf(extra + l, len - l, "\\nops: %s", ops);
	}
	return util;
}

/* A node on the critical path is bold, any other dashed gray. */
static void mark_path(Agnode_t *n, bool critical)
{
	if (critical) {
		set(n, "style", "filled,bold");
		set(n, "penwidth", "3");
	} else {
		set(n, "style", "filled,dashed");
		set(n, "color", "gray");
	}
}

/* Stage i as a node: its label, fill and mark. */
static Agnode_t *stage_node(Agraph_t *g, const struct tfd_pipeline *p, size_t i, bool bound)
{
	const struct tfd_stage *s = &p->stages[i];
	char name[32], label[1024], shown[160], extra[256] = "", fill[32];
	char t1[32], t2[32], t3[32];
	Agnode_t *n;
	double util;

	snprintf(name, sizeof(name), "s%zu", i);
	n = agnode(g, name, 1);
	util = stage_work(p, i, extra, sizeof(extra));
	shown_name(p, i, shown, sizeof(shown));
	snprintf(label, sizeof(label),
		 "%s%s\\n%" PRIu64 " call%s\\ntotal %s  self %s\\nblocking %s (%.1f%%)%s", shown,
		 s->is_async ? " (async)" : "", s->calls_all, s->calls_all == 1 ? "" : "s",
		 tfd_fmt_ns(s->total_all_ns, t1, sizeof(t1)),
		 tfd_fmt_ns(s->self_all_ns, t2, sizeof(t2)),
		 tfd_fmt_ns(s->blocking_ns, t3, sizeof(t3)), 100.0 * s->blocking_share, extra);
	set(n, "label", label);
	{
		size_t tl = 2 * strlen(s->long_name) + 1;
		char *tip = xmalloc(tl);

		set(n, "tooltip", dot_text(s->long_name, tip, tl));
		free(tip);
	}
	/* white (idle) to orange (saturated) */
	snprintf(fill, sizeof(fill), "0.08 %.3f 1.000", 0.85 * util);
	set(n, "fillcolor", fill);
	if (s->is_bottleneck) {
		set(n, "style", "filled,bold");
		set(n, "color", bound ? "red" : "gray40");
		set(n, "penwidth", "3");
	} else {
		mark_path(n, s->on_critical_path);
	}
	return n;
}

/* ---- large pipelines: stages collapsed into groups ---------------------- */

/* The stages drawn as one node: their sums and marks. */
struct group {
	size_t first, n; /* the first stage (pre-order) and how many */
	uint64_t calls;
	int64_t self_ns, blocking_ns;
	double blocking_share;
	bool critical;
	Agnode_t *node;
};

struct grouping {
	int *of; /* each stage's group */
	struct group *g;
	size_t ng;
	struct imap index; /* (parent group, family) -> a group of siblings */
	int *next;	   /* groups sharing an index slot */
};

static uint64_t group_key(int parent_group, const char *family, bool any_family)
{
	return tfd_fnv_text(TFD_FNV_BASIS ^ (uint64_t)(uint32_t)parent_group,
			    any_family ? "" : family);
}

/* The group of siblings under parent group pg that stage i may join, or -1. */
static int sibling_group(const struct grouping *gr, const struct tfd_pipeline *p, int pg, size_t i,
			 bool any_family)
{
	size_t head;

	if (!imap_get(&gr->index, group_key(pg, p->stages[i].family, any_family), &head))
		return -1;
	for (int k = (int)head; k >= 0; k = gr->next[k]) {
		const struct tfd_stage *f = &p->stages[gr->g[k].first];

		if (gr->of[f->parent] == pg &&
		    (any_family || strcmp(f->family, p->stages[i].family) == 0))
			return k;
	}
	return -1;
}

/* Group the stages: the root and the bottleneck alone; a stage joins its
 * parent's group when it is the parent's only child (a chain) of the same
 * family (any family with any_family), else its siblings' group of the
 * same family (any). Returns the number of groups. */
static size_t group_stages(struct grouping *gr, const struct tfd_pipeline *p, const size_t *nkids,
			   bool any_family)
{
	for (size_t i = 0; i < p->nstages; i++) {
		const struct tfd_stage *s = &p->stages[i];
		int pg = s->parent >= 0 ? gr->of[s->parent] : -1, k = -1;
		bool alone = s->parent < 0 || s->is_bottleneck;

		if (!alone && pg >= 0 && !p->stages[gr->g[pg].first].is_bottleneck &&
		    gr->g[pg].first != 0 && nkids[s->parent] == 1 &&
		    (any_family || strcmp(p->stages[s->parent].family, s->family) == 0))
			k = pg;
		if (!alone && k < 0)
			k = sibling_group(gr, p, pg, i, any_family);
		if (k < 0) {
			size_t head;
			uint64_t key = group_key(pg, s->family, any_family);

			k = (int)gr->ng++;
			memset(&gr->g[k], 0, sizeof(gr->g[k]));
			gr->g[k].first = i;
			gr->next[k] = -1;
			if (!alone) {
				if (imap_get(&gr->index, key, &head))
					gr->next[k] = (int)head;
				imap_put(&gr->index, key, (size_t)k);
			}
		}
		gr->of[i] = k;
		gr->g[k].n++;
		gr->g[k].calls += s->calls_all;
		gr->g[k].self_ns = sat_add(gr->g[k].self_ns, s->self_all_ns);
		gr->g[k].blocking_ns = sat_add(gr->g[k].blocking_ns, s->blocking_ns);
		gr->g[k].blocking_share += s->blocking_share;
		gr->g[k].critical |= s->on_critical_path;
	}
	return gr->ng;
}

static void grouping_reset(struct grouping *gr, size_t n)
{
	imap_free(&gr->index);
	memset(&gr->index, 0, sizeof(gr->index));
	gr->ng = 0;
	(void)n;
}

/* "Map x9998" or "5000 stages: Map x4999, Filter x4999, ..." */
static void group_label(const struct tfd_pipeline *p, const struct grouping *gr, int k,
			struct tfd_buf *b)
{
	const char *fam[3] = {NULL, NULL, NULL};
	size_t cnt[3] = {0, 0, 0}, other = 0;

	for (size_t i = gr->g[k].first; i < p->nstages; i++) {
		size_t j;

		if (gr->of[i] != k)
			continue;
		for (j = 0; j < 3 && fam[j] && strcmp(fam[j], p->stages[i].family) != 0; j++)
			;
		if (j == 3) {
			other++;
			continue;
		}
		fam[j] = p->stages[i].family;
		cnt[j]++;
	}
	if (!fam[1]) {
		tfd_buf_printf(b, "%s x%zu", fam[0], cnt[0]);
		return;
	}
	tfd_buf_printf(b, "%zu stages: ", gr->g[k].n);
	for (size_t j = 0; j < 3 && fam[j]; j++)
		tfd_buf_printf(b, "%s%s x%zu", j ? ", " : "", fam[j], cnt[j]);
	if (other)
		tfd_buf_printf(b, ", %zu more", other);
}

/* Group k (of more than one stage) as a node. */
static Agnode_t *group_node(Agraph_t *g, const struct tfd_pipeline *p, const struct grouping *gr,
			    int k)
{
	const struct group *G = &gr->g[k];
	char name[32], t2[32], t3[32], *shown;
	struct tfd_buf b, lb;
	Agnode_t *n;

	snprintf(name, sizeof(name), "g%d", k);
	n = agnode(g, name, 1);
	tfd_buf_init(&b);
	tfd_buf_init(&lb);
	group_label(p, gr, k, &b);
	shown = xmalloc(2 * b.len + 1);
	/* self and blocking times add up; totals of nested stages do not */
	tfd_buf_printf(&lb, "%s (collapsed)\\n%" PRIu64 " calls\\nself %s\\nblocking %s (%.1f%%)",
		       dot_text(b.s, shown, 2 * b.len + 1), G->calls,
		       tfd_fmt_ns(G->self_ns, t2, sizeof(t2)),
		       tfd_fmt_ns(G->blocking_ns, t3, sizeof(t3)), 100.0 * G->blocking_share);
	set(n, "label", lb.s);
	free(shown);
	tfd_buf_release(&lb);
	set(n, "tooltip", "collapsed stages: every one a sibling or the only child of another");
	tfd_buf_release(&b);
	set(n, "fillcolor", "white");
	set(n, "shape", "box3d");
	mark_path(n, G->critical);
	return n;
}

static void stage_edge(Agraph_t *g, const struct tfd_pipeline *p, size_t i, Agnode_t *from,
		       Agnode_t *to)
{
	const struct tfd_stage *s = &p->stages[i];
	Agedge_t *e;

	if (agedge(g, from, to, NULL, 0))
		return; /* collapsed stages: one edge between two groups */
	e = agedge(g, from, to, NULL, 1);
	if (tfd_stage_is_async_edge(s)) {
		set(e, "style", "dashed");
		set(e, "color", "#3465a4");
		set(e, "label", "async");
	}
	if (s->on_critical_path && p->stages[s->parent].on_critical_path)
		set(e, "penwidth", "3");
}

/* The stages' groups when there are too many to draw one by one: by family
 * first, by position alone when that is still too many. NULL when the
 * pipeline is small enough. */
static struct grouping *collapse(const struct tfd_pipeline *p)
{
	struct grouping *gr;
	size_t *nkids;

	if (p->nstages <= TFD_DOT_MAX_NODES)
		return NULL;
	gr = xcalloc(1, sizeof(*gr));
	gr->of = xmalloc(p->nstages * sizeof(*gr->of));
	gr->g = xmalloc(p->nstages * sizeof(*gr->g));
	gr->next = xmalloc(p->nstages * sizeof(*gr->next));
	nkids = xcalloc(p->nstages, sizeof(*nkids));
	for (size_t i = 0; i < p->nstages; i++)
		if (p->stages[i].parent >= 0)
			nkids[p->stages[i].parent]++;
	if (group_stages(gr, p, nkids, false) > TFD_DOT_MAX_NODES) {
		grouping_reset(gr, p->nstages);
		group_stages(gr, p, nkids, true);
	}
	free(nkids);
	return gr;
}

static void grouping_free(struct grouping *gr)
{
	if (!gr)
		return;
	imap_free(&gr->index);
	free(gr->of);
	free(gr->g);
	free(gr->next);
	free(gr);
}

static Agraph_t *build(const struct tfd_host_result *h, const struct tfd_pipeline *p)
{
	struct grouping *gr = collapse(p);
	Agraph_t *g = open_graph(h, p, gr ? gr->ng : p->nstages);
	Agnode_t **nodes = xcalloc(p->nstages + 1, sizeof(*nodes));
	const bool bound = h->bound != TFD_BOUND_NOT;

	legend(g, bound);
	for (size_t i = 0; i < p->nstages; i++) {
		int k = gr ? gr->of[i] : -1;

		if (k < 0 || gr->g[k].n == 1)
			nodes[i] = stage_node(g, p, i, bound);
		else if (gr->g[k].first == i)
			nodes[i] = gr->g[k].node = group_node(g, p, gr, k);
		else
			nodes[i] = gr->g[k].node;
	}
	for (size_t i = 0; i < p->nstages; i++)
		if (p->stages[i].parent >= 0 && nodes[p->stages[i].parent] != nodes[i])
			stage_edge(g, p, i, nodes[p->stages[i].parent], nodes[i]);
	free(nodes);
	grouping_free(gr);
	return g;
}

enum tfd_status tfd_dot_render(const struct tfd_host_result *h, const struct tfd_pipeline *p,
			       const char *format, struct tfd_buf *out, struct tfd_err *err)
{
	Agraph_t *g;
	enum tfd_status st = TFD_OK;

	pthread_once(&gv_once, gv_load);
	if (!gv.loaded)
		return tfd_fail(err, TFD_E_IO,
				"diagrams need Graphviz (Debian package libgvc6): %s", gv.why);
	last_gv_error[0] = '\0';
	agseterrf(gv_err);
	agseterr(AGERR);
	g = build(h, p);
	if (strcmp(format, "dot") == 0) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		if (!f) {
			agclose(g);
			return tfd_fail(err, TFD_E_NOMEM, "cannot open a memory stream");
		}
		agwrite(g, f);
		fclose(f);
		tfd_buf_add(out, buf, len);
		free(buf);
	} else {
		GVC_t *gvc = gvContext();
		char *data = NULL;
		unsigned int len = 0;

		if (gvLayout(gvc, g, "dot") != 0) {
			st = tfd_fail(err, TFD_E_INTERNAL, "graphviz layout failed%s%s",
				      last_gv_error[0] ? ": " : "", last_gv_error);
		} else {
			if (gvRenderData(gvc, g, format, &data, &len) != 0 || !data)
				st = tfd_fail(err, TFD_E_USAGE,
					      "graphviz cannot render format '%s'%s%s", format,
					      last_gv_error[0] ? ": " : "", last_gv_error);
			else
				tfd_buf_add(out, data, len);
			if (data)
				gvFreeRenderData(data);
			gvFreeLayout(gvc, g);
		}
		gvFreeContext(gvc);
	}
	agclose(g);
	return st;
}

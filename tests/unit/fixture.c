#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

void fx_init(struct fx *f)
{
	f->cap = tfd_capture_new();
	f->h = tfd_capture_add_host(f->cap, "host1");
	f->h->has_host_plane = true;
}

struct tfd_event *fx_ev(struct fx *f, int line, const char *name, int64_t off_ps, int64_t dur_ps,
			...)
{
	uint32_t th = tfd_host_thread(f->cap, f->h, line, "");
	struct tfd_event *e =
	    tfd_host_add_event(f->cap, f->h, th, name, off_ps / 1000, dur_ps / 1000);
	va_list ap;
	const char *kv;
	bool has_group = false;
	int64_t group = 0;

	va_start(ap, dur_ps);
	while ((kv = va_arg(ap, const char *)) != NULL) {
		const char *eq = strchr(kv, '=');
		char key[64];
		size_t n = (size_t)(eq - kv);

		memcpy(key, kv, n);
		key[n] = '\0';
		tfd_event_set_stat_str(f->cap, e, key, eq + 1);
		if (strcmp(key, "group_id") == 0) {
			has_group = true;
			group = strtoll(eq + 1, NULL, 10);
		}
	}
	va_end(ap);
	tfd_host_note(f->cap, f->h, has_group, group, off_ps / 1000, (off_ps + dur_ps) / 1000);
	return e;
}

void fx_finish(struct fx *f)
{
	struct tfd_err err = {0};

	tfd_capture_finish(f->cap, &err);
}

void fx_host_input_pipeline(struct fx *f, bool produce)
{
	fx_init(f);
	fx_ev(f, 0, "Iterator::Prefetch", 0, 100 * FX_US, "id=123", NULL);
	if (produce)
		fx_ev(f, 0, "PrefetchConsume", 80 * FX_US, 20 * FX_US, "element_id=100", NULL);
	fx_ev(f, 0, "Iterator::Prefetch", 200 * FX_US, 20 * FX_US, "id=123", NULL);
	if (produce) {
		fx_ev(f, 0, "PrefetchConsume", 210 * FX_US, 10 * FX_US, "element_id=200", NULL);
		fx_ev(f, 1, "PrefetchProduce", 0, 80 * FX_US, "element_id=100", NULL);
	}
	fx_ev(f, 1, "Iterator::Prefetch::Range", 0, 80 * FX_US, "id=456", "parent_id=123", NULL);
	if (produce)
		fx_ev(f, 1, "PrefetchProduce", 100 * FX_US, 80 * FX_US, "element_id=200", NULL);
	fx_ev(f, 1, "Iterator::Prefetch::Range", 100 * FX_US, 80 * FX_US, "id=456", "parent_id=123",
	      NULL);
}

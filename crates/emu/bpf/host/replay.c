// SPDX-License-Identifier: GPL-2.0
/*
 * The host replay of an eBPF congestion control: reads a hook trace recorded from the
 * simulator (crates/tcp/src/cc/record.rs), and for each line loads the socket's tcp_sock from
 * the line's BEFORE snapshot, calls the port's hook through its struct_ops table, and compares
 * snd_cwnd, snd_ssthresh, snd_cwnd_cnt, sk_pacing_rate and the return value with the line's
 * AFTER fields. A socket's "params" line (bbr2plus with cc_params) is written into the port's
 * parameter map first, as the kernel backend does. Prints one JSON object: lines, hooks
 * compared, mismatches and the first one.
 *
 *     replay-NAME [--mptcp] TRACE.jsonl
 *
 * --mptcp: every recorded socket is a subflow of one MPTCP connection (the coupled ports).
 *
 * Where rove's sender calls hooks in another order or way than Linux, the replay calls the port
 * as Linux would (docs/kernel-backend.md "Checking the ports' arithmetic"):
 * - enter_cwr (tcp_cdg's tcp_enter_cwr, which a BPF port cannot call): the port sets ssthresh and
 *   cwnd itself at once. The simulator's line says enter_cwr = 1 and its sender then calls
 *   ssthresh (the next ssthresh line of the socket); the port's cong_avoid must leave ssthresh =
 *   that line's return value and cwnd = min(cwnd, it), and that ssthresh line is not replayed
 *   (the kernel would not call ssthresh: the port never enters CWR).
 * - skb_marked_lost is not a hook of this kernel's tcp_congestion_ops: not replayed.
 * Hooks the port does not define are not called; the simulator's line must then leave the
 * fields unchanged, and does (counted as "absent").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include "replay.h"

extern int rv_prandom_exhausted;

struct field {
	const char *name;
	size_t offset;
};

static const struct field fields[] = {
#define RV_FIELD(name) {#name, offsetof(struct rv_line, name)},
	RV_FIELDS(RV_FIELD)
#undef RV_FIELD
};

struct trace {
	struct rv_line *lines;
	size_t count;
	/* prandom values, per socket */
	unsigned int *prandom[RV_MAX_SOCKS];
	size_t prandom_count[RV_MAX_SOCKS];
	/* per-flow parameters, per socket */
	unsigned int *params[RV_MAX_SOCKS];
	size_t params_count[RV_MAX_SOCKS];
};

static void die(const char *path, size_t line, const char *what)
{
	fprintf(stderr, "%s:%zu: %s\n", path, line, what);
	exit(2);
}

/* Parses one flat JSON object of integer values, one string ("hook") and one integer array
 * ("values", the prandom and params lines). */
static void parse_line(const char *path, size_t lineno, char *s, struct rv_line *l,
		       unsigned int **values, size_t *nvalues)
{
	memset(l, 0, sizeof(*l));
	*values = 0;
	*nvalues = 0;
	while ((s = strchr(s, '"'))) {
		char *key = ++s, *end = strchr(s, '"');

		if (!end || end[1] != ':')
			die(path, lineno, "not a flat JSON object of \"key\":value");
		*end = 0;
		s = end + 2;
		if (*s == '"') {
			char *v = ++s, *vend = strchr(s, '"');

			if (!vend || strcmp(key, "hook") || vend - v >= (long)sizeof(l->hook))
				die(path, lineno, "only \"hook\" may be a string");
			memcpy(l->hook, v, vend - v);
			s = vend + 1;
		} else if (*s == '[') {
			size_t cap = 1024;

			*values = malloc(cap * sizeof(**values));
			s++;
			while (*s && *s != ']') {
				if (*nvalues == cap)
					*values = realloc(*values, (cap *= 2) * sizeof(**values));
				(*values)[(*nvalues)++] = strtoul(s, &s, 10);
				if (*s == ',')
					s++;
			}
			s++;
		} else {
			long long v = strtoll(s, &s, 10);
			size_t i;

			for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
				if (!strcmp(fields[i].name, key)) {
					*(long long *)((char *)l + fields[i].offset) = v;
					break;
				}
			if (i == sizeof(fields) / sizeof(fields[0]))
				die(path, lineno, "unknown key (record.rs and replay.h disagree)");
		}
	}
	if (l->sk < 0 || l->sk >= RV_MAX_SOCKS)
		die(path, lineno, "sk out of range 0..15");
}

static void read_trace(const char *path, struct trace *t)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, len = 0, lineno = 0;
	char *buf = malloc(1 << 20);

	if (!f) {
		perror(path);
		exit(2);
	}
	memset(t, 0, sizeof(*t));
	t->lines = malloc(cap * sizeof(*t->lines));
	/* prandom lines are long: read with getline. */
	{
		char *line = 0;
		size_t n = 0;

		while (getline(&line, &n, f) > 0) {
			unsigned int *values;
			size_t nvalues;

			lineno++;
			if (len == cap)
				t->lines = realloc(t->lines, (cap *= 2) * sizeof(*t->lines));
			parse_line(path, lineno, line, &t->lines[len], &values, &nvalues);
			if (!strcmp(t->lines[len].hook, "prandom")) {
				t->prandom[t->lines[len].sk] = values;
				t->prandom_count[t->lines[len].sk] = nvalues;
				continue;
			}
			if (!strcmp(t->lines[len].hook, "params")) {
				t->params[t->lines[len].sk] = values;
				t->params_count[t->lines[len].sk] = nvalues;
				continue;
			}
			free(values);
			len++;
		}
		free(line);
	}
	free(buf);
	fclose(f);
	t->count = len;
}

struct mismatch {
	const struct rv_line *line;
	const char *field;
	long long sim, port;
};

static struct mismatch first;
static size_t mismatches;

static void check(const struct rv_line *l, const char *field, long long sim, long long port)
{
	if (sim == port)
		return;
	if (!mismatches++)
		first = (struct mismatch){ l, field, sim, port };
}

int main(int argc, char **argv)
{
	struct trace t;
	int mptcp = 0, argi = 1;
	size_t i, compared = 0, absent = 0, absorbed = 0, skipped = 0;
	char *absorbed_line;

	if (argc > 1 && !strcmp(argv[1], "--mptcp")) {
		mptcp = 1;
		argi++;
	}
	if (argc != argi + 1) {
		fprintf(stderr, "usage: %s [--mptcp] TRACE.jsonl\n", argv[0]);
		return 2;
	}
	read_trace(argv[argi], &t);
	absorbed_line = calloc(t.count + 1, 1);
	for (i = 0; i < RV_MAX_SOCKS; i++) {
		rv_prandom_set(i, t.prandom[i], t.prandom_count[i]);
		if (t.params[i] && rv_sock_params(i, t.params[i], t.params_count[i]))
			die(argv[argi], 0, "a params line for a port without a parameter map");
	}

	for (i = 0; i < t.count; i++) {
		const struct rv_line *l = &t.lines[i];
		int sk = l->sk;
		struct rv_out o;
		long long want_cwnd = l->out_cwnd, want_ssthresh = l->out_ssthresh;

		if (absorbed_line[i]) {
			absorbed++;
			continue;
		}
		if (!strcmp(l->hook, "skb_marked_lost")) {
			skipped++;
			continue;
		}
		if (l->enter_cwr) {
			size_t j;

			for (j = i + 1; j < t.count; j++)
				if (t.lines[j].sk == sk && !strcmp(t.lines[j].hook, "ssthresh"))
					break;
			if (j == t.count)
				die(argv[argi], i + 1, "enter_cwr without the sender's ssthresh call");
			absorbed_line[j] = 1;
			want_ssthresh = t.lines[j].ret;
			want_cwnd = l->snd_cwnd < want_ssthresh ? l->snd_cwnd : want_ssthresh;
		}
		rv_sock_load(sk, l, mptcp);
		rv_call(sk, l, &o);
		if (o.called)
			compared++;
		else
			absent++;
		check(l, "snd_cwnd", want_cwnd, o.cwnd);
		check(l, "snd_ssthresh", want_ssthresh, o.ssthresh);
		check(l, "snd_cwnd_cnt", l->out_cnt, o.cnt);
		check(l, "sk_pacing_rate", l->out_pacing_rate, o.pacing_rate);
		if (!strcmp(l->hook, "ssthresh") || !strcmp(l->hook, "undo_cwnd"))
			check(l, "return", l->ret, o.ret);
	}

	printf("{\"algorithm\":\"%s\",\"lines\":%zu,\"compared\":%zu,\"absent\":%zu,"
	       "\"absorbed_ssthresh\":%zu,"
	       "\"skipped_skb_marked_lost\":%zu,\"prandom_exhausted\":%d,\"mismatches\":%zu",
	       rv_ops_name(), t.count, compared, absent, absorbed, skipped,
	       rv_prandom_exhausted, mismatches);
	if (mismatches)
		printf(",\"first_mismatch\":{\"line\":%lld,\"sk\":%lld,\"hook\":\"%s\",\"field\":\"%s\","
		       "\"sim\":%lld,\"port\":%lld,\"now_ns\":%lld}",
		       first.line->n, first.line->sk, first.line->hook, first.field, first.sim,
		       first.port, first.line->now_ns);
	printf("}\n");
	return mismatches ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF environment of the host replay (declared in include/bpf/bpf_helpers.h): the clock
 * (bpf_jiffies64, bpf_ktime_get_ns) from the line being replayed, CONFIG_HZ, in-process maps
 * (hash and sk_storage: a list of (map, key) -> zeroed value), and bpf_get_prandom_u32 from the
 * socket's recorded random stream.
 */
#include <stdlib.h>
#include <string.h>
#include "replay.h"

/* CONFIG_HZ of the simulator's kernel profile (crates/tcp/src/kernel.rs HZ = 250). */
unsigned int CONFIG_HZ = 250;
unsigned long long rv_now_ns;
unsigned int rv_jiffies;
int rv_current_sk;

unsigned long long bpf_jiffies64(void)
{
	return rv_jiffies;
}

unsigned long long bpf_ktime_get_ns(void)
{
	return rv_now_ns;
}

static struct {
	const unsigned int *values;
	unsigned long count, next;
} prandom[RV_MAX_SOCKS];

void rv_prandom_set(int sk, const unsigned int *values, unsigned long count)
{
	prandom[sk].values = values;
	prandom[sk].count = count;
	prandom[sk].next = 0;
}

/* The stream ran out (or none was recorded): the replay reports it. */
int rv_prandom_exhausted;

unsigned int bpf_get_prandom_u32(void)
{
	int sk = rv_current_sk;

	if (prandom[sk].next >= prandom[sk].count) {
		rv_prandom_exhausted = 1;
		return 0;
	}
	return prandom[sk].values[prandom[sk].next++];
}

struct entry {
	struct entry *next;
	void *map;
	unsigned long key_size;
	unsigned char key[16];
	void *value;
};

static struct entry *entries;

static struct entry **find(void *map, const void *key, unsigned long key_size)
{
	struct entry **e;

	for (e = &entries; *e; e = &(*e)->next)
		if ((*e)->map == map && (*e)->key_size == key_size &&
		    !memcmp((*e)->key, key, key_size))
			return e;
	return 0;
}

void *rove_map_lookup(void *map, const void *key, unsigned long key_size,
		      unsigned long value_size)
{
	struct entry **e = find(map, key, key_size);

	(void)value_size;
	return e ? (*e)->value : 0;
}

/* BPF_ANY 0, BPF_NOEXIST 1, BPF_EXIST 2 (include/uapi/linux/bpf.h); -17 = -EEXIST, -2 = -ENOENT. */
long rove_map_update(void *map, const void *key, const void *value, unsigned long key_size,
		     unsigned long value_size, unsigned long long flags)
{
	struct entry **e = find(map, key, key_size);

	if (e && flags == 1)
		return -17;
	if (!e && flags == 2)
		return -2;
	if (!e) {
		struct entry *n = calloc(1, sizeof(*n));

		if (key_size > sizeof(n->key))
			abort();
		n->map = map;
		n->key_size = key_size;
		memcpy(n->key, key, key_size);
		n->value = calloc(1, value_size);
		n->next = entries;
		entries = n;
		e = &entries;
	}
	memcpy((*e)->value, value, value_size);
	return 0;
}

long rove_map_delete(void *map, const void *key, unsigned long key_size)
{
	struct entry **e = find(map, key, key_size), *gone;

	if (!e)
		return -2;
	gone = *e;
	*e = gone->next;
	free(gone->value);
	free(gone);
	return 0;
}

/* BPF_SK_STORAGE_GET_F_CREATE = 1. */
void *rove_sk_storage_get(void *map, void *sk, void *value, unsigned long value_size,
			  unsigned long long flags)
{
	void *v = rove_map_lookup(map, &sk, sizeof(sk), value_size);

	if (v || !(flags & 1))
		return v;
	{
		void *zero = calloc(1, value_size);

		if (value)
			memcpy(zero, value, value_size);
		rove_map_update(map, &sk, zero, sizeof(sk), value_size, 0);
		free(zero);
	}
	return rove_map_lookup(map, &sk, sizeof(sk), value_size);
}

long rove_sk_storage_delete(void *map, void *sk)
{
	return rove_map_delete(map, &sk, sizeof(sk));
}

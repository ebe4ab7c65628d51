/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>

#include "droce_num_table.h"

int
droce_num_table_init(struct droce_num_table *t, const char *name, uint32_t max, int socket)
{
	struct rte_hash_parameters p = {
		.name = name,
		/* Headroom: a cuckoo table may refuse inserts long before it is full. */
		.entries = max * 2,
		.key_len = sizeof(uint32_t),
		.hash_func = rte_hash_crc,
		.socket_id = socket,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};

	memset(t, 0, sizeof(*t));
	t->hash = rte_hash_create(&p);
	if (t->hash == NULL)
		return -rte_errno;
	pthread_mutex_init(&t->lock, NULL);
	t->next = DROCE_QPN_FIRST;
	t->max = max;
	return 0;
}

void
droce_num_table_fini(struct droce_num_table *t)
{
	rte_hash_free(t->hash);
	t->hash = NULL;
}

/* The first number from @p num on (wrapping past the 24 bits) with
 * @p residue in its low bits. */
static uint32_t
num_in_class(uint32_t num, uint32_t mask, uint32_t residue)
{
	uint32_t c = (num & ~mask) | residue;

	if (c < num)
		c += mask + 1;
	if (c > DROCE_NUM_MASK || c < DROCE_QPN_FIRST)
		c = num_in_class(DROCE_QPN_FIRST, mask, residue);
	return c;
}

int
droce_num_table_add_in(struct droce_num_table *t, void *obj, uint32_t mask, uint32_t residue,
		       uint32_t *out)
{
	int rc = -ENOMEM;

	pthread_mutex_lock(&t->lock);
	if (t->count >= t->max)
		goto out;
	for (;;) {
		uint32_t num = num_in_class(t->next, mask, residue);

		t->next = (num + 1 > DROCE_NUM_MASK) ? DROCE_QPN_FIRST : num + 1;
		if (rte_hash_lookup(t->hash, &num) >= 0)
			continue;
		*out = num;
		/* Pairs with droce_num_table_lookup() for TSan. */
		DROCE_TSAN_RELEASE(obj);
		if (rte_hash_add_key_data(t->hash, &num, obj) < 0)
			goto out;
		t->count++;
		rc = 0;
		break;
	}
out:
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int
droce_num_table_add(struct droce_num_table *t, void *obj, uint32_t *out)
{
	return droce_num_table_add_in(t, obj, 0, 0, out);
}

int
droce_num_table_add_at(struct droce_num_table *t, void *obj, uint32_t num)
{
	int rc = -EEXIST;

	pthread_mutex_lock(&t->lock);
	if (t->count >= t->max)
		rc = -ENOMEM;
	else if (rte_hash_lookup(t->hash, &num) < 0) {
		DROCE_TSAN_RELEASE(obj);
		rc = rte_hash_add_key_data(t->hash, &num, obj) < 0 ? -ENOMEM : 0;
		if (rc == 0)
			t->count++;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int32_t
droce_num_table_remove(struct droce_num_table *t, uint32_t num)
{
	int32_t pos;

	pthread_mutex_lock(&t->lock);
	pos = rte_hash_del_key(t->hash, &num);
	if (pos >= 0) {
		t->count--;
		__atomic_add_fetch(&t->gen, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&t->lock);
	return pos;
}

void
droce_num_table_release(struct droce_num_table *t, int32_t pos)
{
	pthread_mutex_lock(&t->lock);
	rte_hash_free_key_with_position(t->hash, pos);
	pthread_mutex_unlock(&t->lock);
}

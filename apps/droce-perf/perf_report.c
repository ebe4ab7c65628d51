/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What droce-perf prints, and how the numbers are made: perftest's
 * banner, address lines and result tables (perftest_parameters.[ch]:
 * ctx_print_test_info, print_report_bw, print_report_lat), so a run can
 * be compared line by line with perftest's; the same figures as JSON with
 * --json; a progress line on stderr every second of a long run.
 *
 * Units as perftest's: MB/sec is 2^20 bytes per second, Gb/sec 10^9 bits
 * per second, MsgRate millions of messages per second, latencies in
 * microseconds from the TSC.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "perf.h"

#define RESULT_LINE "---------------------------------------------------------------------------------------\n"

/* ---- the clock ---- */

void
perf_clock_start(struct perf_clock *c, const struct perf_opts *o)
{
	memset(c, 0, sizeof(*c));
	c->hz = rte_get_tsc_hz();
	c->start = rte_rdtsc();
	if (o->duration > 0) {
		c->sample_start = c->start + (uint64_t)(o->margin * (double)c->hz);
		c->sample_end = c->start + (uint64_t)((o->duration - o->margin) * (double)c->hz);
		c->end = c->start + (uint64_t)(o->duration * (double)c->hz);
	}
	c->next_progress = c->start + c->hz;
	c->last_change = c->start;
}

int
perf_clock_tick(struct perf_clock *c, uint64_t now, uint64_t count)
{
	if (now < c->next_progress)
		return 0;
	c->next_progress += c->hz;
	if (count != c->last_count) {
		c->last_count = count;
		c->last_change = now;
	} else if (now - c->last_change > PERF_STALL_S * c->hz) {
		fprintf(stderr, PERF_NAME ": no progress for %d s (the peer is gone, or packets "
			"are lost for good): giving up\n", PERF_STALL_S);
		return -1;
	}
	fprintf(stderr, PERF_NAME ": %.1f s, %" PRIu64 " msgs\n",
		(double)(now - c->start) / (double)c->hz, count);
	return 0;
}

void
perf_window_update(struct perf_window *w, const struct perf_clock *c, uint64_t now,
		   uint64_t count)
{
	if (!w->open && !w->done && now >= c->sample_start) {
		w->open = true;
		w->t0 = now;
		w->n0 = count;
	} else if (w->open && now >= c->sample_end) {
		w->open = false;
		w->done = true;
		w->t1 = now;
		w->n1 = count;
	}
}

double
perf_window_finish(struct perf_window *w, const struct perf_clock *c, uint64_t now,
		   uint64_t count)
{
	if (!w->done) {
		if (!w->open) {
			w->t0 = c->start;
			w->n0 = 0;
		}
		w->open = false;
		w->done = true;
		w->t1 = now;
		w->n1 = count;
	}
	return w->t1 > w->t0 ? (double)(w->t1 - w->t0) / (double)c->hz : 0;
}

/* ---- statistics ---- */

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* perftest leaves the two largest samples out (LAT_MEASURE_TAIL). */
#define LAT_TAIL 2

static void
print_samples(const struct perf_opts *o, const uint64_t *d, uint64_t n, double unit)
{
	uint64_t i;

	if (o->json)
		return;
	printf("#, usec\n");
	for (i = 0; i < n; i++)
		printf("%" PRIu64 ", %g\n", i + 1, (double)d[i] / unit);
}

void
perf_sched_mark(struct perf_sched *s)
{
	struct rusage ru;
	FILE *f;

	s->preempted = getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_nivcsw : 0;
	s->wait_ns = 0;
	/* schedstat: time on the CPU, time waiting for it, slices (ns) */
	f = fopen("/proc/thread-self/schedstat", "r");
	if (f == NULL)
		return;
	if (fscanf(f, "%*u %" SCNu64, &s->wait_ns) != 1)
		s->wait_ns = 0;
	fclose(f);
}

void
perf_sched_since(struct perf_sched *start)
{
	struct perf_sched now;

	perf_sched_mark(&now);
	start->preempted = now.preempted - start->preempted;
	start->wait_ns = now.wait_ns - start->wait_ns;
}

/* How many of the sorted @p d are at most @p limit. */
static uint64_t
count_up_to(const uint64_t *d, uint64_t n, double limit)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if ((double)d[mid] <= limit)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t *
perf_stamps_alloc(uint64_t n)
{
	uint64_t *s = n <= SIZE_MAX / sizeof(*s) ? malloc(n * sizeof(*s)) : NULL;

	if (s != NULL)
		memset(s, 0, n * sizeof(*s));
	return s;
}

int
perf_lat_stats(const struct perf_opts *o, const uint64_t *tposted, uint64_t hz,
	       struct perf_lat_result *r)
{
	uint64_t iters = o->iters, n = iters - 1, cnt, i, median;
	double unit = (double)hz / 1e6 * perf_rtt_factor(o), sum = 0, var = 0;
	uint64_t *d;

	d = malloc(n * sizeof(*d));
	if (d == NULL)
		return -1;
	for (i = 0; i < n; i++)
		d[i] = tposted[i + 1] - tposted[i];
	if (o->unsorted)
		print_samples(o, d, n, unit);
	qsort(d, n, sizeof(*d), cmp_u64);
	cnt = n - LAT_TAIL;
	if (o->histogram)
		print_samples(o, d, cnt, unit);
	median = (cnt - 1) % 2 ? (d[cnt / 2] + d[cnt / 2 - 1]) / 2 : d[cnt / 2];
	for (i = 0; i < cnt; i++)
		sum += (double)d[i] / unit;
	r->t_avg = sum / (double)cnt;
	for (i = 0; i < cnt; i++) {
		double dev = (double)d[i] / unit - r->t_avg;

		var += dev * dev;
	}
	r->iters = iters;
	r->duration = false;
	r->t_min = (double)d[0] / unit;
	r->t_max = (double)d[cnt] / unit;
	r->t_typical = (double)median / unit;
	r->t_stdev = sqrt(var / (double)cnt);
	r->t_p99 = (double)d[(uint64_t)ceil((double)cnt * 0.99)] / unit;
	r->t_p999 = (double)d[(uint64_t)ceil((double)cnt * 0.999)] / unit;
	r->samples = n;
	r->t_max_all = (double)d[n - 1] / unit;
	r->above_50us = n - count_up_to(d, n, 50 * unit);
	r->above_100us = n - count_up_to(d, n, 100 * unit);
	r->tps = 0;
	free(d);
	return 0;
}

void
perf_bw_stats(const uint64_t *tposted, const uint64_t *tcompleted, uint64_t n,
	      unsigned cq_mod, bool peak, uint64_t hz, struct perf_bw_result *r)
{
	double secs = (double)(tcompleted[n - 1] - tposted[0]) / (double)hz;
	uint64_t best = tcompleted[0] - tposted[0], i, j;

	r->iters = n;
	r->avg_Bps = (double)r->size * (double)n / secs;
	r->msg_rate = (double)n / secs;
	r->peak_Bps = 0;
	if (!peak)
		return;
	/* The shortest time per message over any run of messages that ends at
	 * a completion (perftest's search, completions every cq_mod). */
	for (i = 0; i < n; i++) {
		for (j = (i + cq_mod) / cq_mod * cq_mod - 1; j < n; j += cq_mod) {
			uint64_t t = (tcompleted[j] - tposted[i]) / (j - i + 1);

			if (t < best)
				best = t;
		}
		if (n % cq_mod) {
			uint64_t t = (tcompleted[n - 1] - tposted[i]) / (n - i);

			if (t < best)
				best = t;
		}
	}
	if (best > 0)
		r->peak_Bps = (double)r->size * (double)hz / (double)best;
}

/* ---- printing ---- */

static bool json_first;

static const char *
mode_name(const struct perf_opts *o)
{
	return o->mode == PERF_BW ? (o->bidir ? "Bidirectional BW" : "BW") : "Latency";
}

void
perf_report_begin(const struct perf_opts *o, const struct perf_info *info)
{
	if (o->json) {
		printf("{\n  \"test_info\": {\n"
		       "    \"test\": \"%s\",\n    \"mode\": \"%s\",\n    \"raw_l2\": %s,\n"
		       "    \"touch\": %s,\n    \"thread_domain\": %s,\n"
		       "    \"side\": \"%s\",\n    \"device\": \"%s\",\n"
		       "    \"connection\": \"%s\",\n    \"qps\": %u,\n    \"mtu\": %u,\n"
		       "    \"tx_depth\": %u,\n    \"cq_mod\": %u,\n    \"duration\": %g,\n"
		       "    \"bw_unit\": \"%s\",\n    \"lat_unit\": \"usec\"\n  },\n"
		       "  \"results\": [",
		       perf_test_name(o->test), mode_name(o), o->raw ? "true" : "false",
		       o->touch ? "true" : "false", !o->raw && !o->no_td ? "true" : "false",
		       o->server ? "server" : "client", info->device, perf_conn_name(o->conn),
		       o->qps, info->mtu, o->tx_depth, o->cq_mod, o->duration,
		       o->gbits ? "Gb/sec" : "MB/sec");
		json_first = true;
		fflush(stdout);
		return;
	}
	printf(RESULT_LINE);
	if (o->raw)
		printf("                    Raw_L2 %s Test (%s frames%s)\n", mode_name(o),
		       perf_test_name(o->test),
		       o->touch ? "; ideal endpoint: CRC32 and one copy each side" : "");
	else
		printf("                    %s %s%s Test\n", perf_test_name(o->test),
		       o->test == PERF_ATOMIC ? (o->atomic_cas ? "CMP_AND_SWAP " : "FETCH_AND_ADD ") : "",
		       mode_name(o));
	printf(" Dual-port       : OFF\t\tDevice         : %s\n", info->device);
	printf(" Number of qps   : %u\t\tTransport type : %s\n", o->qps, o->raw ? "Raw Ethernet" : "IB");
	printf(" Connection type : %s\t\tUsing SRQ      : OFF\n", o->raw ? "RawEth" : perf_conn_name(o->conn));
	if (!o->raw)
		printf(" Thread domain   : %s\n", o->no_td ? "OFF (locked queues)" : "ON");
	if (!o->server || o->bidir)
		printf(" TX depth        : %u\n", o->tx_depth);
	if (o->test == PERF_SEND && (o->server || o->bidir))
		printf(" RX depth        : %u\n", o->rx_depth);
	if (o->mode == PERF_BW)
		printf(" CQ Moderation   : %u\n", o->cq_mod);
	printf(" Mtu             : %u[B]\n", info->mtu);
	if (info->crc_path != NULL)
		printf(" CRC32 path      : %s\n", info->crc_path);
	printf(" Link type       : Ethernet\n");
	if (!o->raw) {
		printf(" GID index       : %d\n", info->gid_index);
		if (o->test == PERF_READ || o->test == PERF_ATOMIC)
			printf(" Outstand reads  : %d\n", info->outs);
		else
			printf(" Max inline data : %d[B]\n", info->inline_size);
		printf(" rdma_cm QPs\t : OFF\n");
	}
	printf(" Data ex. method : Ethernet\n");
	printf(RESULT_LINE);
	fflush(stdout);
}

void
perf_report_dest(const struct perf_opts *o, bool local, uint32_t qpn, uint32_t psn,
		 uint32_t rkey, uint64_t vaddr, const uint8_t gid[16])
{
	int i;

	if (o->json)
		return;
	printf(" %s address: LID 0000 QPN %#06x PSN %#08x RKey %#08x VAddr %#016" PRIx64 "\n",
	       local ? "local" : "remote", qpn, psn, rkey, vaddr);
	/* perftest prints the GID's bytes in decimal */
	printf(" GID: ");
	for (i = 0; i < 16; i++)
		printf("%02d%c", gid[i], i == 15 ? '\n' : ':');
}

void
perf_report_table_head(const struct perf_opts *o)
{
	if (o->json)
		return;
	printf(RESULT_LINE);
	if (o->mode == PERF_LAT && o->duration > 0)
		printf(" #bytes        #iterations       t_avg[usec]    tps average\n");
	else if (o->mode == PERF_LAT)
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
		       "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec] \n");
	else
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   MsgRate[Mpps]%s\n",
		       o->gbits ? "Gb/sec" : "MB/sec", o->gbits ? "Gb/sec" : "MB/sec",
		       o->raw ? "   Frames/msg   FrameRate[Mpps]" : "");
	fflush(stdout);
}

/* ---- cycles ---- */

static const char *const side_names[] = { "client", "server" };

/* Per message and per byte of the test: every message either side sent. */
struct cost_view {
	uint64_t msgs, bytes;
	double per_msg, own_per_msg, port_per_msg;
	double per_byte, own_per_byte, port_per_byte;
	double tx_frames_per_msg, rx_frames_per_msg;
};

static void
cost_view(const struct perf_cost *c, unsigned side, uint64_t size, struct cost_view *v)
{
	const struct perf_side_cycles *s = &c->side[side];
	double port = (double)(s->rx_burst + s->tx_burst);

	memset(v, 0, sizeof(*v));
	v->msgs = c->side[PERF_CLIENT].sent + c->side[PERF_SERVER].sent;
	v->bytes = v->msgs * size;
	if (v->msgs > 0) {
		v->per_msg = (double)s->busy / (double)v->msgs;
		v->port_per_msg = port / (double)v->msgs;
		v->own_per_msg = v->per_msg - v->port_per_msg;
		v->tx_frames_per_msg = (double)s->tx_frames / (double)v->msgs;
		v->rx_frames_per_msg = (double)s->rx_frames / (double)v->msgs;
	}
	if (v->bytes > 0) {
		v->per_byte = (double)s->busy / (double)v->bytes;
		v->port_per_byte = port / (double)v->bytes;
		v->own_per_byte = v->per_byte - v->port_per_byte;
	}
}

/* Engine @p e of this side: cycles per message it handled, in all, its
 * own and the port's. */
static void
engine_view(const struct perf_cost *c, unsigned e, double *per_msg, double *own, double *port)
{
	const struct perf_engine_cycles *x = &c->engine[e];
	double msgs = x->msgs > 0 ? (double)x->msgs : 1;

	*per_msg = (double)x->busy / msgs;
	*port = (double)(x->rx_burst + x->tx_burst) / msgs;
	*own = *per_msg - *port;
}

/* Below the cycles: each droce side's congestion control. */
static void
print_cc(const struct perf_cost *c)
{
	unsigned i;

	for (i = 0; i < RTE_DIM(side_names); i++) {
		const struct perf_side_cc *s = &c->side[i].cc;

		if (!s->known)
			continue;
		printf("   cc %s: ce_received %" PRIu64 " cnps_sent %" PRIu64 " cnps_received %" PRIu64
		       " rate_decreases %" PRIu64 " rate_increases %" PRIu64 " paced %" PRIu64
		       "; paced QPs %u", side_names[i], s->ce_received, s->cnps_sent,
		       s->cnps_received, s->rate_decreases, s->rate_increases, s->paced, s->paced_qps);
		if (s->paced_qps > 0)
			printf(" at %" PRIu64 "..%" PRIu64 " Mb/s (lowest %" PRIu64 ")",
			       s->rate_min_mbps, s->rate_max_mbps, s->lowest_mbps);
		printf("\n");
	}
}

/* Below a row of the table: a line per side, then with several engines
 * a line per engine of this side. */
static void
print_cost(const struct perf_opts *o, const struct perf_cost *c, uint64_t size)
{
	double per_msg, own, port;
	struct cost_view v;
	unsigned i;

	if (!c->known)
		return;
	for (i = 0; c->nb_engines > 1 && i < c->nb_engines; i++) {
		engine_view(c, i, &per_msg, &own, &port);
		printf("   cycles %s engine %2u: %10.1f/msg (own %10.1f + port %10.1f) over %"
		       PRIu64 " messages\n", side_names[o->server ? PERF_SERVER : PERF_CLIENT], i,
		       per_msg, own, port, c->engine[i].msgs);
	}
	for (i = 0; i < RTE_DIM(side_names); i++) {
		cost_view(c, i, size, &v);
		printf("   cycles %s: %10.1f/msg (own %10.1f + port %10.1f)  %8.4f/B "
		       "(own %8.4f + port %8.4f)  frames/msg tx %.3f rx %.3f", side_names[i],
		       v.per_msg, v.own_per_msg, v.port_per_msg, v.per_byte, v.own_per_byte,
		       v.port_per_byte, v.tx_frames_per_msg, v.rx_frames_per_msg);
		if (c->side[i].skipped > 0)
			printf("  [%" PRIu64 " preempted left out]", c->side[i].skipped);
		printf("\n");
	}
	for (i = 0; i < RTE_DIM(side_names); i++) {
		const struct perf_stages *st = &c->side[i].stages;
		unsigned k;

		if (st->n == 0 || c->stage_names == NULL)
			continue;
		cost_view(c, i, size, &v);
		printf("   stages %s, own cycles/msg:", side_names[i]);
		for (k = 0; k < st->n; k++)
			printf(" %s %.1f", c->stage_names[k],
			       (double)st->cycles[k] / (double)RTE_MAX(v.msgs, (uint64_t)1));
		printf("\n");
	}
	print_cc(c);
}

/* Each droce side's congestion control, an object per side. */
static void
json_cc(const struct perf_cost *c)
{
	bool first = true;
	unsigned i;

	for (i = 0; i < RTE_DIM(side_names); i++) {
		const struct perf_side_cc *s = &c->side[i].cc;

		if (!s->known)
			continue;
		printf("%s\"%s\": {\"ce_received\": %" PRIu64 ", \"cnps_sent\": %" PRIu64
		       ", \"cnps_received\": %" PRIu64 ", \"rate_decreases\": %" PRIu64
		       ", \"rate_increases\": %" PRIu64 ", \"paced\": %" PRIu64
		       ", \"paced_qps\": %u, \"rate_min_mbps\": %" PRIu64
		       ", \"rate_max_mbps\": %" PRIu64 ", \"lowest_rate_mbps\": %" PRIu64 "}",
		       first ? ", \"cc\": {" : ", ", side_names[i], s->ce_received, s->cnps_sent,
		       s->cnps_received, s->rate_decreases, s->rate_increases, s->paced,
		       s->paced_qps, s->rate_min_mbps, s->rate_max_mbps, s->lowest_mbps);
		first = false;
	}
	if (!first)
		printf("}");
}

/* A side's own cycles per message by stage, inside its object. */
static void
json_stages(const struct perf_cost *c, const struct perf_stages *st, const struct cost_view *v)
{
	unsigned k;

	if (st->n == 0 || c->stage_names == NULL)
		return;
	printf(", \"stages_per_msg\": {");
	for (k = 0; k < st->n; k++)
		printf("%s\"%s\": %.3f", k > 0 ? ", " : "", c->stage_names[k],
		       (double)st->cycles[k] / (double)RTE_MAX(v->msgs, (uint64_t)1));
	printf("}");
}

static void
json_cost(const struct perf_opts *o, const struct perf_cost *c, uint64_t size)
{
	const struct perf_side_cycles *s;
	double per_msg, own, port;
	struct cost_view v;
	unsigned i;

	if (!c->known)
		return;
	cost_view(c, PERF_CLIENT, size, &v);
	/* The TSC's rate turns a rate or a latency into cycles per message,
	 * beside the busy ones (tests/bench/targets.sh). */
	printf(", \"cycles\": {\"tsc_hz\": %" PRIu64 ", \"messages\": %" PRIu64
	       ", \"bytes\": %" PRIu64, rte_get_tsc_hz(), v.msgs, v.bytes);
	for (i = 0; i < RTE_DIM(side_names); i++) {
		s = &c->side[i];
		cost_view(c, i, size, &v);
		printf(", \"%s\": {\"busy\": %" PRIu64 ", \"rx_burst\": %" PRIu64
		       ", \"tx_burst\": %" PRIu64 ", \"sent\": %" PRIu64 ", \"skipped\": %" PRIu64
		       ", \"per_msg\": %.3f"
		       ", \"own_per_msg\": %.3f, \"port_per_msg\": %.3f, \"per_byte\": %.6f"
		       ", \"own_per_byte\": %.6f, \"port_per_byte\": %.6f"
		       ", \"tx_frames\": %" PRIu64 ", \"rx_frames\": %" PRIu64
		       ", \"tx_frames_per_msg\": %.4f, \"rx_frames_per_msg\": %.4f", side_names[i],
		       s->busy, s->rx_burst, s->tx_burst, s->sent, s->skipped, v.per_msg, v.own_per_msg,
		       v.port_per_msg, v.per_byte, v.own_per_byte, v.port_per_byte, s->tx_frames,
		       s->rx_frames, v.tx_frames_per_msg, v.rx_frames_per_msg);
		json_stages(c, &s->stages, &v);
		printf("}");
	}
	if (c->nb_engines > 0)
		printf(", \"engines\": {\"side\": \"%s\", \"per_engine\": [",
		       side_names[o->server ? PERF_SERVER : PERF_CLIENT]);
	for (i = 0; i < c->nb_engines; i++) {
		engine_view(c, i, &per_msg, &own, &port);
		printf("%s{\"engine\": %u, \"busy\": %" PRIu64 ", \"rx_burst\": %" PRIu64
		       ", \"tx_burst\": %" PRIu64 ", \"messages\": %" PRIu64 ", \"per_msg\": %.3f"
		       ", \"own_per_msg\": %.3f, \"port_per_msg\": %.3f}", i > 0 ? ", " : "", i,
		       c->engine[i].busy, c->engine[i].rx_burst, c->engine[i].tx_burst,
		       c->engine[i].msgs, per_msg, own, port);
	}
	if (c->nb_engines > 0)
		printf("]}");
	printf("}");
	json_cc(c);
}

static void
json_row_start(void)
{
	printf("%s\n    {", json_first ? "" : ",");
	json_first = false;
}

void
perf_report_bw(const struct perf_opts *o, const struct perf_bw_result *r)
{
	double f = o->gbits ? 125000000.0 : 1048576.0;
	double peak = r->peak_Bps / f, avg = r->avg_Bps / f, mr = r->msg_rate / 1e6;

	if (o->json) {
		json_row_start();
		printf("\"bytes\": %" PRIu64 ", \"iterations\": %" PRIu64 ", \"bw_peak\": %.6f, "
		       "\"bw_average\": %.6f, \"msg_rate_mpps\": %.6f, \"bw_average_gbps\": %.6f",
		       r->size, r->iters, peak, avg, mr, r->avg_Bps * 8 / 1e9);
		if (o->raw)
			printf(", \"frames_per_msg\": %u, \"frame_bytes\": %u, \"frame_rate_mpps\": %.6f",
			       r->frames_per_msg, r->frame_bytes, r->pps / 1e6);
		json_cost(o, &r->cost, r->size);
		printf("}");
	} else {
		/* perftest's REPORT_FMT, and REPORT_FMT_EXT for tiny Gb/sec figures */
		if (o->gbits && avg < 0.1)
			printf(" %-7" PRIu64 "    %" PRIu64 "           %-7.6lf            %-7.6lf            %-7.6lf",
			       r->size, r->iters, peak, avg, mr);
		else
			printf(" %-7" PRIu64 "    %-10" PRIu64 "       %-7.2lf            %-7.2lf\t\t   %-7.6lf",
			       r->size, r->iters, peak, avg, mr);
		if (o->raw)
			printf("      %-7u      %-7.6lf", r->frames_per_msg, r->pps / 1e6);
		printf("\n");
		print_cost(o, &r->cost, r->size);
	}
	fflush(stdout);
}

void
perf_report_lat(const struct perf_opts *o, const struct perf_lat_result *r)
{
	if (o->json) {
		json_row_start();
		if (r->duration)
			printf("\"bytes\": %" PRIu64 ", \"iterations\": %" PRIu64 ", \"t_avg\": %.6f, "
			       "\"tps\": %.6f", r->size, r->iters, r->t_avg, r->tps);
		else
			printf("\"bytes\": %" PRIu64 ", \"iterations\": %" PRIu64 ", \"t_min\": %.6f, "
			       "\"t_max\": %.6f, \"t_typical\": %.6f, \"t_avg\": %.6f, \"t_stdev\": %.6f, "
			       "\"t_p99\": %.6f, \"t_p99_9\": %.6f, \"samples\": %" PRIu64
			       ", \"t_max_all\": %.6f, \"above_50us\": %" PRIu64 ", \"above_100us\": %" PRIu64
			       ", \"preempted\": %" PRIu64 ", \"cpu_wait_ms\": %.3f",
			       r->size, r->iters, r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev,
			       r->t_p99, r->t_p999, r->samples, r->t_max_all, r->above_50us, r->above_100us,
			       r->sched.preempted, (double)r->sched.wait_ns / 1e6);
		json_cost(o, &r->cost, r->size);
		printf("}");
	} else if (r->duration) {
		printf(" %-7" PRIu64 "       %" PRIu64 "            %-7.2f        %-7.2f\n",
		       r->size, r->iters, r->t_avg, r->tps);
	} else {
		printf(" %-7" PRIu64 " %" PRIu64 "          %-7.2f        %-7.2f      %-7.2f  \t       "
		       "%-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
		       r->size, r->iters, r->t_min, r->t_max, r->t_typical, r->t_avg, r->t_stdev,
		       r->t_p99, r->t_p999);
		printf("   tail: largest %.2f usec; %" PRIu64 " of %" PRIu64 " samples above 50 usec, %"
		       PRIu64 " above 100 usec; this side lost its CPU %" PRIu64 " times, %.3f ms "
		       "waiting for it\n", r->t_max_all, r->above_50us, r->samples, r->above_100us,
		       r->sched.preempted, (double)r->sched.wait_ns / 1e6);
	}
	if (!o->json)
		print_cost(o, &r->cost, r->size);
	fflush(stdout);
}

void
perf_report_end(const struct perf_opts *o)
{
	if (o->json)
		printf("\n  ]\n}\n");
	else
		printf(RESULT_LINE);
	fflush(stdout);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * droce's rte_log type ("droce"), shared by every layer. The level comes
 * from the configuration ([log] level, or DROCE_LOG).
 */
#ifndef DROCE_LOG_H
#define DROCE_LOG_H

#include <rte_log.h>

/** The rte_log type of droce's messages. */
extern int droce_logtype;

#define DROCE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, droce_logtype, "droce: " fmt "\n", ##__VA_ARGS__)

#endif /* DROCE_LOG_H */

/* SPDX-License-Identifier: BSD-3-Clause */
#include "droce_log.h"

int droce_logtype;

RTE_INIT(droce_log_init)
{
	droce_logtype = rte_log_register("droce");
	if (droce_logtype >= 0)
		rte_log_set_level(droce_logtype, RTE_LOG_NOTICE);
}

// SPDX-License-Identifier: GPL-2.0
/* The offcpu-waker event's payload, as the report reads it. */
#include <stddef.h>

#include "format/waker_record.h"

const char *waker_kind_frame(uint32_t kind)
{
	switch (kind) {
	case WAKER_TIMER: return "[timer]";
	case WAKER_SOFTIRQ: return "[softirq]";
	case WAKER_IRQ: return "[irq]";
	case WAKER_NO_KSTACK: return "[waker-kernel-stack-not-recorded]";
	case WAKER_KSTACK_CUT: return "[waker-kernel-stack-cut]";
	case WAKER_UNKNOWN: return "[no-wakeup-seen]";
	}
	return NULL;
}

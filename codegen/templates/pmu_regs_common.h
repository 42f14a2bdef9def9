/*
 * pmu-regs: definitions every processor header shares.
 *
 * Each processor header (pmu_regs_<processor>.h) includes this file and defines, per register,
 * its address and layout and, per field, a shift, width, mask, maximum and static inline
 * get/set functions built on the helpers below. The helpers work on any field given its mask
 * and shift, for code that takes the layout from somewhere else (the JSON model in
 * generated/model/, for instance). A field made of several bit ranges (AMD's event select:
 * register bits 35:32 and 7:0) has no single shift: each range i, most significant first, has
 * _R<i>_SHIFT and _R<i>_MASK (register position) and _R<i>_AT (where its bits sit in the
 * value), and the field's get/set gather and scatter them.
 *
 * Reading the masks: a layout's _RESERVED_MASK bits must be written as zero; _IGNORED_MASK bits
 * read as zero and ignore writes; _WRITABLE_MASK bits are the ones software may write. A PCI
 * register's address is its device id (vendor PMU_REGS_PCI_VENDOR_INTEL), device, function and
 * config-space offset; the bus is each socket's uncore bus, found by the device id.
 *
 * Plain C99 and C++: only <stdint.h>, no compiler extensions.
 */
#ifndef PMU_REGS_COMMON_H
#define PMU_REGS_COMMON_H

#include <stdint.h>

/* The PCI vendor id of every PCI register in these headers. */
#define PMU_REGS_PCI_VENDOR_INTEL 0x8086U

/* The field at mask (register position) and shift of reg, shifted down to bit 0. */
static inline uint64_t pmu_regs_get64(uint64_t reg, uint64_t mask, unsigned shift)
{
	return (reg & mask) >> shift;
}

/* reg with the field at mask and shift replaced by value; value bits beyond the field are dropped. */
static inline uint64_t pmu_regs_set64(uint64_t reg, uint64_t mask, unsigned shift, uint64_t value)
{
	return (reg & ~mask) | ((value << shift) & mask);
}

/* The 32-bit forms, for 32-bit registers. */
static inline uint32_t pmu_regs_get32(uint32_t reg, uint32_t mask, unsigned shift)
{
	return (reg & mask) >> shift;
}

static inline uint32_t pmu_regs_set32(uint32_t reg, uint32_t mask, unsigned shift, uint32_t value)
{
	return (reg & ~mask) | ((value << shift) & mask);
}

/*
 * Bit arrays (one element per counter, sized by CPUID): element n of count elements of width
 * bits each, the first at shift. An n at or beyond count reads as zero and is not written.
 */
static inline uint64_t pmu_regs_element_mask64(unsigned shift, unsigned width, unsigned count, unsigned n)
{
	uint64_t low = width >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << width) - 1);
	return n < count ? low << (shift + n * width) : 0;
}

static inline uint64_t pmu_regs_element_get64(uint64_t reg, unsigned shift, unsigned width, unsigned count, unsigned n)
{
	return n < count ? pmu_regs_get64(reg, pmu_regs_element_mask64(shift, width, count, n), shift + n * width) : 0;
}

static inline uint64_t pmu_regs_element_set64(uint64_t reg, unsigned shift, unsigned width, unsigned count, unsigned n, uint64_t value)
{
	return n < count ? pmu_regs_set64(reg, pmu_regs_element_mask64(shift, width, count, n), shift + n * width, value) : reg;
}

static inline uint32_t pmu_regs_element_get32(uint32_t reg, unsigned shift, unsigned width, unsigned count, unsigned n)
{
	return (uint32_t)pmu_regs_element_get64(reg, shift, width, count, n);
}

static inline uint32_t pmu_regs_element_set32(uint32_t reg, unsigned shift, unsigned width, unsigned count, unsigned n, uint32_t value)
{
	return (uint32_t)pmu_regs_element_set64(reg, shift, width, count, n, value);
}

/*
 * Derived metrics. Each processor's header has, for every metric, its name, unit and events
 * (macros), its formula as data (postfix steps, as the Rust crate's pmu_regs::metrics::Op) and
 * a function that evaluates it with pmu_regs_metric_evaluate. A count or a constant that is
 * not known is NaN (pmu_regs_metric_unknown()). A metric is n/a (the function returns 0 and
 * leaves *value alone) on a division by zero, an unknown input, a result that is not finite,
 * or steps that are not a formula; otherwise it returns 1 and sets *value: the same values
 * as the Rust evaluator, never an infinity or a NaN.
 */
#define PMU_REGS_OP_NUM 0U
#define PMU_REGS_OP_EVENT 1U
#define PMU_REGS_OP_CONST 2U
#define PMU_REGS_OP_NEG 3U
#define PMU_REGS_OP_ADD 4U
#define PMU_REGS_OP_SUB 5U
#define PMU_REGS_OP_MUL 6U
#define PMU_REGS_OP_DIV 7U
#define PMU_REGS_OP_MIN 8U
#define PMU_REGS_OP_MAX 9U
#define PMU_REGS_OP_GT 10U
#define PMU_REGS_OP_LT 11U
#define PMU_REGS_OP_GE 12U
#define PMU_REGS_OP_LE 13U
#define PMU_REGS_OP_SELECT 14U
#define PMU_REGS_CONST_SYSTEM_TSC_FREQ 0U
#define PMU_REGS_CONST_SOCKET_COUNT 1U
#define PMU_REGS_CONST_CORES_PER_SOCKET 2U
#define PMU_REGS_CONST_CHAS_PER_SOCKET 3U
#define PMU_REGS_CONST_THREADS_PER_CORE 4U
#define PMU_REGS_CONST_HYPERTHREADING_ON 5U
#define PMU_REGS_CONST_CPU_COUNT 6U
#define PMU_REGS_CONST_DURATION_SECONDS 7U
#define PMU_REGS_CONST_DURATION_MILLISECONDS 8U
#define PMU_REGS_METRIC_MAX_STACK 64U

/* How a metric's event is read: counted by a counter, or from the top-down registers of
 * Ice Lake and later cores (fixed counter 3, TOPDOWN.SLOTS, MSR 0x30C; IA32_PERF_METRICS,
 * MSR 0x329), both started from 0 at the interval's start. */
#define PMU_REGS_READ_COUNTED 0U
#define PMU_REGS_READ_SLOTS 1U
#define PMU_REGS_READ_SLOTS_SHARE 2U

/* The count of a top-down event over an interval: the slots (PMU_REGS_READ_SLOTS), or the
 * slots of the category in byte `byte` of IA32_PERF_METRICS, slots x byte / 0xFF rounded down
 * (PMU_REGS_READ_SLOTS_SHARE; Linux's icl_get_metrics_event_value). Any other read, or a byte
 * above 7, gives 0. */
static inline uint64_t pmu_regs_topdown_count(unsigned read, uint64_t slots, uint64_t perf_metrics, unsigned byte)
{
	uint64_t share, hi, lo;
	if (read == PMU_REGS_READ_SLOTS)
		return slots;
	if (read != PMU_REGS_READ_SLOTS_SHARE || byte > 7U)
		return 0;
	share = (perf_metrics >> (byte * 8U)) & 0xFFU;
	/* slots x share needs 72 bits: divide the high and low 32-bit halves separately. */
	hi = (slots >> 32) * share;
	lo = (slots & 0xFFFFFFFFU) * share;
	return ((hi / 0xFFU) << 32) + (((hi % 0xFFU) << 32) + lo) / 0xFFU;
}

/* One step of a formula: op is a PMU_REGS_OP_; num the number of PMU_REGS_OP_NUM; index the
 * event (PMU_REGS_OP_EVENT) or the PMU_REGS_CONST_ (PMU_REGS_OP_CONST). */
struct pmu_regs_metric_step {
	unsigned op;
	unsigned index;
	double num;
};

/* The constants a formula reads; NaN where unknown. */
struct pmu_regs_metric_constants {
	double tsc_hz;
	double socket_count;
	double cores_per_socket;
	double chas_per_socket;
	double threads_per_core;
	double cpu_count;
	double duration_seconds;
};

static inline double pmu_regs_metric_unknown(void)
{
	double zero = 0.0;
	return zero / zero;
}

static inline int pmu_regs_metric_finite(double x)
{
	/* x - x is NaN for an infinity and for a NaN, 0 for every finite x. */
	return x - x == 0.0;
}

static inline double pmu_regs_metric_constant(const struct pmu_regs_metric_constants *c, unsigned which)
{
	switch (which) {
	case PMU_REGS_CONST_SYSTEM_TSC_FREQ: return c->tsc_hz;
	case PMU_REGS_CONST_SOCKET_COUNT: return c->socket_count;
	case PMU_REGS_CONST_CORES_PER_SOCKET: return c->cores_per_socket;
	case PMU_REGS_CONST_CHAS_PER_SOCKET: return c->chas_per_socket;
	case PMU_REGS_CONST_THREADS_PER_CORE: return c->threads_per_core;
	case PMU_REGS_CONST_HYPERTHREADING_ON:
		return pmu_regs_metric_finite(c->threads_per_core) ? (c->threads_per_core > 1.0 ? 1.0 : 0.0) : c->threads_per_core;
	case PMU_REGS_CONST_CPU_COUNT: return c->cpu_count;
	case PMU_REGS_CONST_DURATION_SECONDS: return c->duration_seconds;
	case PMU_REGS_CONST_DURATION_MILLISECONDS: return c->duration_seconds * 1000.0;
	default: return pmu_regs_metric_unknown();
	}
}

static inline double pmu_regs_metric_binary(unsigned op, double a, double b)
{
	if (!pmu_regs_metric_finite(a) || !pmu_regs_metric_finite(b))
		return pmu_regs_metric_unknown();
	switch (op) {
	case PMU_REGS_OP_ADD: return a + b;
	case PMU_REGS_OP_SUB: return a - b;
	case PMU_REGS_OP_MUL: return a * b;
	case PMU_REGS_OP_DIV: return b == 0.0 ? pmu_regs_metric_unknown() : a / b;
	case PMU_REGS_OP_MIN: return a < b ? a : b;
	case PMU_REGS_OP_MAX: return a > b ? a : b;
	case PMU_REGS_OP_GT: return a > b ? 1.0 : 0.0;
	case PMU_REGS_OP_LT: return a < b ? 1.0 : 0.0;
	case PMU_REGS_OP_GE: return a >= b ? 1.0 : 0.0;
	case PMU_REGS_OP_LE: return a <= b ? 1.0 : 0.0;
	default: return pmu_regs_metric_unknown();
	}
}

static inline int pmu_regs_metric_evaluate(const struct pmu_regs_metric_step *steps, unsigned nsteps, const double *counts, unsigned ncounts, const struct pmu_regs_metric_constants *c, double *value)
{
	double stack[PMU_REGS_METRIC_MAX_STACK];
	unsigned len = 0, i;
	for (i = 0; i < nsteps; i++) {
		unsigned op = steps[i].op;
		unsigned arity = op <= PMU_REGS_OP_CONST ? 0U : op == PMU_REGS_OP_NEG ? 1U : op == PMU_REGS_OP_SELECT ? 3U : 2U;
		double r;
		if (len < arity || (arity == 0U && len == PMU_REGS_METRIC_MAX_STACK))
			return 0;
		len -= arity;
		switch (op) {
		case PMU_REGS_OP_NUM: r = steps[i].num; break;
		case PMU_REGS_OP_EVENT: r = steps[i].index < ncounts ? counts[steps[i].index] : pmu_regs_metric_unknown(); break;
		case PMU_REGS_OP_CONST: r = pmu_regs_metric_constant(c, steps[i].index); break;
		case PMU_REGS_OP_NEG: r = -stack[len]; break;
		case PMU_REGS_OP_SELECT:
			r = !pmu_regs_metric_finite(stack[len]) ? pmu_regs_metric_unknown() : stack[len] != 0.0 ? stack[len + 1] : stack[len + 2];
			break;
		default: r = pmu_regs_metric_binary(op, stack[len], stack[len + 1]); break;
		}
		stack[len++] = pmu_regs_metric_finite(r) ? r : pmu_regs_metric_unknown();
	}
	if (len != 1U || !pmu_regs_metric_finite(stack[0]))
		return 0;
	*value = stack[0];
	return 1;
}

#endif /* PMU_REGS_COMMON_H */

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

#endif /* PMU_REGS_COMMON_H */

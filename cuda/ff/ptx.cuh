// 32-bit carry-chain primitives.
//
// On the device each one is a single PTX instruction that reads and/or writes the
// carry flag, so a chain of them must stay in program order: they are `asm volatile`.
// Under PT_EMU (the harness's host emulator) the same calls run on the CPU with an
// explicit carry flag, so the exact instruction sequence of every field routine can
// be checked against big-integer references without a GPU.
#pragma once
#include <stdint.h>

#ifndef PT_EMU
#define PT_FI __device__ __forceinline__

PT_FI uint32_t add_cc(uint32_t a, uint32_t b)  { uint32_t r; asm volatile("add.cc.u32 %0, %1, %2;"  : "=r"(r) : "r"(a), "r"(b)); return r; }
PT_FI uint32_t addc_cc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
PT_FI uint32_t addc(uint32_t a, uint32_t b)    { uint32_t r; asm volatile("addc.u32 %0, %1, %2;"    : "=r"(r) : "r"(a), "r"(b)); return r; }
PT_FI uint32_t sub_cc(uint32_t a, uint32_t b)  { uint32_t r; asm volatile("sub.cc.u32 %0, %1, %2;"  : "=r"(r) : "r"(a), "r"(b)); return r; }
PT_FI uint32_t subc_cc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
PT_FI uint32_t subc(uint32_t a, uint32_t b)    { uint32_t r; asm volatile("subc.u32 %0, %1, %2;"    : "=r"(r) : "r"(a), "r"(b)); return r; }
PT_FI uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c)  { uint32_t r; asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;"  : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
PT_FI uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
PT_FI uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c)  { uint32_t r; asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;"  : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
PT_FI uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
PT_FI uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c)    { uint32_t r; asm volatile("madc.hi.u32 %0, %1, %2, %3;"    : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
PT_FI uint32_t mul_lo(uint32_t a, uint32_t b) { return a * b; }
PT_FI uint32_t mul_hi(uint32_t a, uint32_t b) { return __umulhi(a, b); }
// full 32x32->64 product (one IMAD.WIDE.U32), split into halves
PT_FI void mul_wide(uint32_t a, uint32_t b, uint32_t& lo, uint32_t& hi) {
    uint64_t w = (uint64_t)a * b;
    asm("mov.b64 {%0, %1}, %2;" : "=r"(lo), "=r"(hi) : "l"(w));
}

#else  // PT_EMU: host emulation with an explicit carry flag (single host thread).
#define PT_FI inline
extern uint32_t pt_emu_cf;
PT_FI uint32_t pt_emu_set(uint64_t t) { pt_emu_cf = (uint32_t)(t >> 32) & 1; return (uint32_t)t; }
PT_FI uint32_t add_cc(uint32_t a, uint32_t b)  { return pt_emu_set((uint64_t)a + b); }
PT_FI uint32_t addc_cc(uint32_t a, uint32_t b) { return pt_emu_set((uint64_t)a + b + pt_emu_cf); }
PT_FI uint32_t addc(uint32_t a, uint32_t b)    { return a + b + pt_emu_cf; }
PT_FI uint32_t sub_cc(uint32_t a, uint32_t b)  { pt_emu_cf = a < b; return a - b; }
PT_FI uint32_t subc_cc(uint32_t a, uint32_t b) { uint64_t t = (uint64_t)b + pt_emu_cf; uint32_t r = (uint32_t)(a - t); pt_emu_cf = (uint64_t)a < t; return r; }
PT_FI uint32_t subc(uint32_t a, uint32_t b)    { return a - b - pt_emu_cf; }
PT_FI uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c)  { return pt_emu_set((uint64_t)(uint32_t)((uint64_t)a * b) + c); }
PT_FI uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return pt_emu_set((uint64_t)(uint32_t)((uint64_t)a * b) + c + pt_emu_cf); }
PT_FI uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c)  { return pt_emu_set((((uint64_t)a * b) >> 32) + c); }
PT_FI uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return pt_emu_set((((uint64_t)a * b) >> 32) + c + pt_emu_cf); }
PT_FI uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c)    { return (uint32_t)((((uint64_t)a * b) >> 32) + c + pt_emu_cf); }
PT_FI uint32_t mul_lo(uint32_t a, uint32_t b) { return a * b; }
PT_FI uint32_t mul_hi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
PT_FI void mul_wide(uint32_t a, uint32_t b, uint32_t& lo, uint32_t& hi) {
    uint64_t w = (uint64_t)a * b;
    lo = (uint32_t)w;
    hi = (uint32_t)(w >> 32);
}
#endif

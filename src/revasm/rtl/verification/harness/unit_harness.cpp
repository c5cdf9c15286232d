// The Verilator harness of the exhaustive unit checks (rtl/verification/unit_exhaustive.py).
//
// The top module is rtl/verification/unit_exhaustive.UnitFrame: one multi-cycle unit with uniform
// ports -- go (start the operation picked by sel), sel, x, y, z (words), done, r0, r1,
// overflow, fault.  The harness runs operation SEL on every input in order -- the
// packed index I = x | y << W | z << 2W for ARITY operands (the others 0) -- each from
// the unit idle, and writes one 8-byte record per input to stdout (native byte order):
// r0 (u16), r1 (u16), the cycles from go to done (u16; 0xFFFF: done did not rise within
// BOUND cycles), the flags (u8: overflow, fault << 1), a zero byte.
//
//   unit_harness SEL ARITY W BOUND SEL2 FIRST COUNT
//       the inputs FIRST .. FIRST + COUNT - 1 (several processes share the inputs);
//       SEL2 >= 0: the law -- SEL, then SEL2 on its results with the same z (r0, r1:
//       SEL2's; the cycles: both runs'); SEL2 = -1: SEL alone
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "verilated.h"
#include "Vunit_top.h"

struct Record {
    uint16_t r0, r1, cycles;
    uint8_t flags, zero;
};

static Vunit_top* top;

static void tick() {
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
}

// run operation sel on (x, y, z) from idle; the cycles to done, or 0xFFFF
static unsigned run(unsigned sel, unsigned x, unsigned y, unsigned z, unsigned bound) {
    top->sel = sel;
    top->x = x;
    top->y = y;
    top->z = z;
    top->go = 1;
    tick();
    top->go = 0;
    for (unsigned cycle = 1; cycle <= bound; ++cycle) {
        if (top->done) return cycle;  // settled by the tick's last eval
        tick();
    }
    return 0xFFFF;
}

int main(int argc, char** argv) {
    if (argc != 8) {
        std::fprintf(stderr, "usage: %s SEL ARITY W BOUND SEL2 FIRST COUNT\n", argv[0]);
        return 2;
    }
    const unsigned sel = std::atoi(argv[1]);
    const unsigned width = std::atoi(argv[3]), bound = std::atoi(argv[4]);
    const int sel2 = std::atoi(argv[5]);
    const bool law = sel2 >= 0;
    const uint64_t mask = (1u << width) - 1;
    const uint64_t first = std::strtoull(argv[6], nullptr, 10);
    const uint64_t last = first + std::strtoull(argv[7], nullptr, 10);
    auto context = std::make_unique<VerilatedContext>();
    top = new Vunit_top(context.get());
    top->rst = 1;
    tick();
    tick();
    top->rst = 0;
    tick();
    static Record buffer[1 << 14];
    size_t filled = 0;
    for (uint64_t packed = first; packed < last; ++packed) {
        const unsigned x = packed & mask, y = (packed >> width) & mask;
        const unsigned z = (packed >> (2 * width)) & mask;
        // done rises as the unit returns to idle: the next operation starts at once
        unsigned cycles = run(sel, x, y, z, bound);
        if (law && cycles != 0xFFFF) {
            const unsigned back = run(sel2, top->r0, top->r1, z, bound);
            cycles = back == 0xFFFF ? 0xFFFF : cycles + back;
        }
        Record& record = buffer[filled++];
        record.r0 = top->r0;
        record.r1 = top->r1;
        record.cycles = cycles;
        record.flags = (top->overflow ? 1 : 0) | (top->fault ? 2 : 0);
        record.zero = 0;
        if (cycles == 0xFFFF) {  // stuck: reset, so that the next input starts from idle
            top->rst = 1;
            tick();
            top->rst = 0;
        }
        if (filled == sizeof buffer / sizeof buffer[0]) {
            std::fwrite(buffer, sizeof(Record), filled, stdout);
            filled = 0;
        }
    }
    std::fwrite(buffer, sizeof(Record), filled, stdout);
    top->final();
    delete top;
    return 0;
}

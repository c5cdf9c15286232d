// The Verilator harness of revasm's lockstep co-simulation (rtl/verilator.py).
//
// A small command server around the verilated core: Python drives the core's host
// interface one command per line on stdin and reads the answers on stdout.  The
// ports (names, widths, the retire port's fields) come from ports.h, which
// rtl/verilator.py generates from the core's signature for every build, so this
// file never names a port of the core.
//
//   s ID HEX     set input port ID (the value in hex, any width)
//   t N          N clock cycles
//   g ID         settle, print output port ID in hex
//   r LIMIT      clock until the core is idle: one line "v CYCLES HEX..." (the cycles
//                since the run began, in hex, then the retire port's fields in
//                RETIRE_FIELDS order) per retired instruction, then
//                "e CYCLES NANOSECONDS RETIRED", or "x ..." when LIMIT cycles pass
//                without a retired instruction
//   f LIMIT      the same without the "v" lines (the model's own speed)
//   q            quit
//
// A clock cycle samples the inputs at the rising edge and settles the outputs after
// it, like `await ctx.tick()` in Amaranth's simulator; "r" samples retire.valid and
// host.busy just before each edge, like `ctx.tick().sample(...).until(...)`.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "verilated.h"
#include "ports.h"  // VTOP, N_PORTS, PORT_WORDS, port_set, port_get, PORT_VALID, PORT_BUSY,
                    // RETIRE_FIELDS, N_RETIRE

static VTOP* top;
static uint64_t cycles = 0;
static char out[1 << 16];
static size_t out_len = 0;

static void flush_out() {
    fwrite(out, 1, out_len, stdout);
    out_len = 0;
    fflush(stdout);
}

static void put(const char* text, size_t n) {
    if (out_len + n > sizeof out) {
        fwrite(out, 1, out_len, stdout);
        out_len = 0;
    }
    memcpy(out + out_len, text, n);
    out_len += n;
}

static void put_hex(const uint32_t* words, int n) {
    char buffer[8 * 8 + 2];
    int top_word = n - 1;
    while (top_word > 0 && words[top_word] == 0) top_word--;
    int len = snprintf(buffer, sizeof buffer, "%x", words[top_word]);
    for (int i = top_word - 1; i >= 0; i--)
        len += snprintf(buffer + len, sizeof buffer - len, "%08x", words[i]);
    put(buffer, len);
}

static void put_port(int id) {
    uint32_t words[8] = {0};
    port_get(top, id, words);
    put_hex(words, PORT_WORDS[id]);
}

static void parse_hex(const char* text, uint32_t* words, int n) {
    for (int i = 0; i < n; i++) words[i] = 0;
    size_t len = strlen(text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' ')) len--;
    int bit = 0;
    for (size_t i = len; i-- > 0 && bit < 32 * n; bit += 4) {
        char c = text[i];
        uint32_t digit = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
        words[bit / 32] |= digit << (bit % 32);
    }
}

static void tick() {
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    cycles++;
}

static bool read_bit(int id) {
    uint32_t words[8] = {0};
    port_get(top, id, words);
    return words[0] & 1;
}

static void run(uint64_t limit, bool stream) {
    auto start = std::chrono::steady_clock::now();
    uint64_t first = cycles, quiet = 0, retired = 0;
    bool stuck = false;
    top->eval();  // the inputs set since the last edge; they stay put during the run
    for (;;) {
        // the outputs are settled after every edge: these are the values before the next
        bool valid = read_bit(PORT_VALID), busy = read_bit(PORT_BUSY);
        tick();
        if (valid) {
            quiet = 0;
            retired++;
            if (!stream) continue;
            char stamp[24];
            put(stamp, snprintf(stamp, sizeof stamp, "v %llx",
                                (unsigned long long)(cycles - first)));
            for (int k = 0; k < N_RETIRE; k++) {
                put(" ", 1);
                put_port(RETIRE_FIELDS[k]);
            }
            put("\n", 1);
        } else if (!busy) {
            break;
        } else if (++quiet >= limit) {
            stuck = true;
            break;
        }
    }
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - start).count();
    char line[96];
    int len = snprintf(line, sizeof line, "%c %llu %lld %llu\n", stuck ? 'x' : 'e',
                       (unsigned long long)(cycles - first), (long long)ns,
                       (unsigned long long)retired);
    put(line, len);
    flush_out();
}

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
    top = new VTOP{context.get()};
    top->clk = 1;
    top->eval();
    static char line[1 << 12];
    while (fgets(line, sizeof line, stdin)) {
        char* rest = line + 1;
        switch (line[0]) {
        case 's': {
            int id = (int)strtol(rest, &rest, 10);
            uint32_t words[8];
            while (*rest == ' ') rest++;
            parse_hex(rest, words, PORT_WORDS[id]);
            port_set(top, id, words);
            break;
        }
        case 't': {
            long n = strtol(rest, nullptr, 10);
            for (long i = 0; i < n; i++) tick();
            break;
        }
        case 'g': {
            int id = (int)strtol(rest, nullptr, 10);
            top->eval();
            put_port(id);
            put("\n", 1);
            flush_out();
            break;
        }
        case 'r':
        case 'f':
            run(strtoull(rest, nullptr, 10), line[0] == 'r');
            break;
        case 'q':
            top->final();
            delete top;
            return 0;
        default:
            fprintf(stderr, "harness: unknown command: %s", line);
            return 2;
        }
    }
    top->final();
    delete top;
    return 0;
}

// The Verilator harness of revasm's lockstep co-simulation (rtl/verification/verilator.py).
//
// A small command server around the verilated core: Python drives the core's host
// interface one command per line on stdin and reads the answers on stdout.  The
// ports (names, widths, the retire port's fields) come from ports.h, which
// rtl/verification/verilator.py generates from the core's signature for every build, so this
// file never names a port of the core.
//
//   s ID HEX     set input port ID (the value in hex, any width)
//   t N          N clock cycles
//   g ID         settle, print output port ID in hex
//   r LIMIT      clock until the core is idle, streaming the retire port in binary
//                frames (native byte order): a u32 count N, then N records of
//                RECORD_WORDS u32 each -- the cycles since the run began (u64, low word
//                first), then the retire port's fields in RETIRE_FIELDS order, each in
//                PORT_WORDS[id] words, low word first -- one record per retired
//                instruction; the run ends with the count 0xFFFFFFFF and five u64:
//                stuck (1 when LIMIT cycles passed without a retired instruction),
//                CYCLES, NANOSECONDS, RETIRED, CPU_NANOSECONDS (this process's CPU time
//                in the run: the model's speed on a loaded machine)
//   f LIMIT      the same without the records (the model's own speed): one text line
//                "e CYCLES NANOSECONDS RETIRED CPU_NANOSECONDS", "x ..." when stuck
//   w PATH       (a build with --trace) write the waveforms to the VCD file PATH from
//                now on, timed as Amaranth's simulator times the co-simulation: a 1 us
//                clock, rising edge N at N us + 0.5 us, times in fs
//   q            quit (and close the VCD file)
//
// A clock cycle samples the inputs at the rising edge and settles the outputs after
// it, like `await ctx.tick()` in Amaranth's simulator; "r" samples retire.valid and
// host.busy just before each edge, like `ctx.tick().sample(...).until(...)`.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#endif
#include "ports.h"  // VTOP, N_PORTS, PORT_WORDS, port_set, port_get, PORT_VALID, PORT_BUSY,
                    // RETIRE_FIELDS, N_RETIRE, RECORD_WORDS

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

#if VM_TRACE
static VerilatedVcdC* vcd = nullptr;
static const uint64_t PERIOD_FS = 1000000000u;  // Amaranth's add_clock(1e-6), in fs
#endif

static void tick() {
    top->clk = 0;
    top->eval();
#if VM_TRACE
    if (vcd) vcd->dump(cycles * PERIOD_FS);
#endif
    top->clk = 1;
    top->eval();
#if VM_TRACE
    if (vcd) vcd->dump(cycles * PERIOD_FS + PERIOD_FS / 2);
#endif
    cycles++;
}

static void finish() {
    top->final();
#if VM_TRACE
    if (vcd) vcd->close();
#endif
    delete top;
}

static bool read_bit(int id) {
    uint32_t words[8] = {0};
    port_get(top, id, words);
    return words[0] & 1;
}

// The records of a streaming run, sent a frame at a time (one write per ~64 KiB).
static const uint32_t END_OF_RUN = 0xFFFFFFFFu;
static const size_t FRAME_RECORDS = (1 << 16) / (4 * RECORD_WORDS) + 1;
static uint32_t frame[1 + FRAME_RECORDS * RECORD_WORDS];
static uint32_t frame_records = 0;

static void send_frame() {
    if (frame_records == 0) return;
    frame[0] = frame_records;
    fwrite(frame, 4, 1 + (size_t)frame_records * RECORD_WORDS, stdout);
    fflush(stdout);  // the other side compares while this one goes on clocking
    frame_records = 0;
}

static void add_record(uint64_t cycle) {
    uint32_t* record = frame + 1 + (size_t)frame_records * RECORD_WORDS;
    record[0] = (uint32_t)cycle;
    record[1] = (uint32_t)(cycle >> 32);
    uint32_t* word = record + 2;
    for (int k = 0; k < N_RETIRE; k++) {
        int id = RETIRE_FIELDS[k];
        uint32_t words[8] = {0};
        port_get(top, id, words);
        for (int i = 0; i < PORT_WORDS[id]; i++) *word++ = words[i];
    }
    if (++frame_records == FRAME_RECORDS) send_frame();
}

static uint64_t cpu_ns() {
    timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void run(uint64_t limit, bool stream) {
    auto start = std::chrono::steady_clock::now();
    uint64_t cpu_start = cpu_ns();
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
            if (stream) add_record(cycles - first);
        } else if (!busy) {
            break;
        } else if (++quiet >= limit) {
            stuck = true;
            break;
        }
    }
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - start).count();
    uint64_t cpu = cpu_ns() - cpu_start;
    if (stream) {
        send_frame();
        uint64_t end[5] = {stuck, cycles - first, (uint64_t)ns, retired, cpu};
        fwrite(&END_OF_RUN, 4, 1, stdout);
        fwrite(end, 8, 5, stdout);
        fflush(stdout);
        return;
    }
    char line[96];
    int len = snprintf(line, sizeof line, "%c %llu %lld %llu %llu\n", stuck ? 'x' : 'e',
                       (unsigned long long)(cycles - first), (long long)ns,
                       (unsigned long long)retired, (unsigned long long)cpu);
    put(line, len);
    flush_out();
}

int main(int argc, char** argv) {
    auto context = std::make_unique<VerilatedContext>();
    context->commandArgs(argc, argv);
#if VM_TRACE
    context->traceEverOn(true);
#endif
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
#if VM_TRACE
        case 'w': {
            while (*rest == ' ') rest++;
            rest[strcspn(rest, "\n")] = 0;
            vcd = new VerilatedVcdC;
            top->trace(vcd, 99);
            vcd->set_time_unit("1fs");
            vcd->set_time_resolution("1fs");
            vcd->open(rest);
            if (!vcd->isOpen()) {
                fprintf(stderr, "harness: cannot write the VCD file %s\n", rest);
                return 2;
            }
            break;
        }
#endif
        case 'q':
            finish();
            return 0;
        default:
            fprintf(stderr, "harness: unknown command: %s", line);
            return 2;
        }
    }
    finish();
    return 0;
}

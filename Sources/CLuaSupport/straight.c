/* Straight functions: a Lua function with no loop, no backward jump, no call and no
 * to-be-closed variable executes each of its instructions at most once, so a call of it runs at
 * most its length in instructions. When that length is below the hook's step, the exact count
 * hook would never fire during the call: it would count zero steps, charge nothing and stop
 * nothing. Such a call may as well run without the hook, which spares Lua's hooked interpreter
 * path on every instruction (a health function returning a table is usually straight).
 * Only Lua code reached through a metamethod could run more, and no value has a metatable a
 * script could reach until a script sets or reads one (sandbox.c tells the host); then every
 * call is counted by the hook again. The function's instructions are read from lua_dump's
 * output (Lua 5.4's binary chunk: header, then the main function's fields up to its code). */
#include "host.h"

#include <string.h>

/* Lua 5.4's opcodes that loop, call or close (lopcodes.h, "ORDER OP"). */
enum {
    OP_TBC = 55, OP_JMP = 56, OP_CALL = 68, OP_TAILCALL = 69, OP_FORLOOP = 73, OP_FORPREP = 74,
    OP_TFORPREP = 75, OP_TFORCALL = 76, OP_TFORLOOP = 77, OP_COUNT = 83
};
#define OPCODE(i) ((i) & 0x7Fu)
#define JUMP_OFFSET(i) ((long)(((i) >> 7) & 0x1FFFFFFu) - 0xFFFFFFL) /* sJ: 25 bits, excess-K */

/* The longest straight function that can never reach the hook: the hook fires on the mark-th
 * instruction, and marks are RH_STEP or RH_STEP - 1. */
#define STRAIGHT_MAX (RH_STEP - 2)

/* Enough of the dump for the header, the main function's fields before its code, and the code
 * of a function no longer than STRAIGHT_MAX. */
#define DUMP_ROOM (64 + 4 * STRAIGHT_MAX)

typedef struct dump_prefix {
    unsigned char bytes[DUMP_ROOM];
    size_t length;
} dump_prefix;

/* lua_dump's writer: keeps what fits, then asks lua_dump to stop. */
static int keep_prefix(lua_State *L, const void *p, size_t size, void *ud) {
    (void)L;
    dump_prefix *d = ud;
    size_t room = sizeof d->bytes - d->length;
    size_t n = size < room ? size : room;
    memcpy(d->bytes + d->length, p, n);
    d->length += n;
    return n < size;
}

typedef struct reader {
    const unsigned char *at;
    const unsigned char *end;
} reader;

static int read_bytes(reader *r, size_t n) {
    if ((size_t)(r->end - r->at) < n) return 0;
    r->at += n;
    return 1;
}

/* A size as the dump writes it: 7 bits a byte, most significant first, the last byte marked. */
static int read_size(reader *r, size_t *out) {
    size_t x = 0;
    for (;;) {
        if (r->at >= r->end || x > (SIZE_MAX >> 7)) return 0;
        unsigned char b = *r->at++;
        x = (x << 7) | (b & 0x7Fu);
        if (b & 0x80u) break;
    }
    *out = x;
    return 1;
}

/* Whether the dumped function is straight and short; 0 for anything unexpected. */
static int dump_is_straight(const dump_prefix *d) {
    static const unsigned char signature[] = {0x1B, 'L', 'u', 'a', 0x54, 0x00, 0x19, 0x93, '\r', '\n', 0x1A, '\n', 4};
    reader r = {d->bytes, d->bytes + d->length};
    if (d->length < sizeof signature + 2 || memcmp(d->bytes, signature, sizeof signature) != 0) return 0;
    if (d->bytes[sizeof signature] != 8 || d->bytes[sizeof signature + 1] != 8) return 0; /* integer, number */
    size_t source, skip;
    /* header: signature, instruction size (checked), integer and number sizes, a test integer
     * and number; then the main closure's upvalue count */
    if (!read_bytes(&r, sizeof signature + 2 + 8 + 8 + 1)) return 0;
    if (!read_size(&r, &source) || (source > 0 && !read_bytes(&r, source - 1))) return 0;
    if (!read_size(&r, &skip) || !read_size(&r, &skip)) return 0; /* first and last line */
    if (!read_bytes(&r, 3)) return 0;                                  /* parameters, vararg, stack size */
    size_t count;
    if (!read_size(&r, &count) || count > STRAIGHT_MAX || (size_t)(r.end - r.at) < 4 * count) return 0;
    for (size_t i = 0; i < count; i++) {
        uint32_t instruction;
        memcpy(&instruction, r.at + 4 * i, 4);
        switch (OPCODE(instruction)) {
        case OP_TBC: case OP_CALL: case OP_TAILCALL: case OP_FORLOOP: case OP_FORPREP:
        case OP_TFORPREP: case OP_TFORCALL: case OP_TFORLOOP:
            return 0;
        case OP_JMP:
            if (JUMP_OFFSET(instruction) < 0) return 0;
            break;
        default:
            if (OPCODE(instruction) >= OP_COUNT) return 0;
        }
    }
    return 1;
}

int rh_is_straight(rh_host *h, lua_State *L, int index, int ref) {
    if (h->metatables || ref < 0 || ref >= RH_LABEL_MAX) return 0;
    const void *function = lua_topointer(L, index);
    if (function == NULL) return 0;
    if (h->straight[ref].function == function) return h->straight[ref].straight;
    int straight = 0;
    if (lua_type(L, index) == LUA_TFUNCTION && !lua_iscfunction(L, index) && lua_checkstack(L, 1)) {
        dump_prefix d;
        d.length = 0;
        lua_pushvalue(L, index);
        lua_dump(L, keep_prefix, &d, 1);
        lua_pop(L, 1);
        straight = dump_is_straight(&d);
    }
    h->straight[ref].function = function;
    h->straight[ref].straight = straight;
    return straight;
}

int rh_function_is_straight(rh_host *h, int ref) {
    lua_State *L = h->L;
    if (!lua_checkstack(L, 1)) return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    int straight = rh_is_straight(h, L, -1, ref);
    lua_pop(L, 1);
    return straight;
}

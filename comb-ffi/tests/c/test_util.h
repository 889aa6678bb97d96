/* Helpers shared by the C tests of comb-ffi (C99). Everything is static inline, so a test
 * that does not use a helper does not warn. */
#ifndef COMB_TEST_UTIL_H
#define COMB_TEST_UTIL_H

#include "comb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Failed checks so far (each test program is one translation unit). */
static int test_failures;

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);        \
            test_failures++;                                                                \
        }                                                                                   \
    } while (0)

/* Checks that an int expression equals an expected code; prints both names on mismatch. */
#define CHECK_CODE(expr, want)                                                              \
    do {                                                                                    \
        int got_ = (int)(expr);                                                             \
        int want_ = (int)(want);                                                            \
        if (got_ != want_) {                                                                \
            fprintf(stderr, "%s:%d: %s = %d (%s), expected %d (%s)\n", __FILE__, __LINE__,  \
                    #expr, got_, comb_strerror(got_), want_, comb_strerror(want_));         \
            test_failures++;                                                                \
        }                                                                                   \
    } while (0)

/* Decodes hex into out (at most cap bytes); returns the byte count. Aborts on bad input. */
static inline size_t unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = strlen(s);
    size_t i;
    if (n % 2 != 0 || n / 2 > cap) {
        fprintf(stderr, "bad hex string (length %lu)\n", (unsigned long)n);
        abort();
    }
    for (i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) {
            fprintf(stderr, "bad hex digit in %s\n", s);
            abort();
        }
        out[i] = (uint8_t)v;
    }
    return n / 2;
}

/* A key handle from hex; aborts on failure. */
static inline comb_key *key_from_hex(const char *hex)
{
    uint8_t raw[32];
    comb_key *key = NULL;
    size_t n = unhex(hex, raw, sizeof raw);
    int rc = comb_key_new(raw, n, &key);
    if (rc != COMB_OK || key == NULL) {
        fprintf(stderr, "comb_key_new: %s\n", comb_strerror(rc));
        abort();
    }
    return key;
}

/* A key handle of len bytes all equal to fill. */
static inline comb_key *key_filled(uint8_t fill, size_t len)
{
    uint8_t raw[32];
    comb_key *key = NULL;
    memset(raw, fill, sizeof raw);
    if (comb_key_new(raw, len, &key) != COMB_OK) {
        fprintf(stderr, "comb_key_new failed\n");
        abort();
    }
    return key;
}

/* The engine; aborts on failure (no AES-NI: the library cannot run here). */
static inline comb_engine *engine_or_die(void)
{
    comb_engine *engine = NULL;
    int rc = comb_engine_new(&engine);
    if (rc != COMB_OK) {
        fprintf(stderr, "comb_engine_new: %s\n", comb_strerror(rc));
        abort();
    }
    return engine;
}

/* Deterministic bytes. */
static inline void fill_pattern(uint8_t *p, size_t n, unsigned seed)
{
    size_t i;
    uint32_t x = 0x9e3779b9u ^ seed;
    for (i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        p[i] = (uint8_t)x;
    }
}

/* A job with the common fields set. */
static inline comb_job make_job(const comb_key *key, const uint8_t *in, size_t len, uint8_t *out,
                                size_t out_cap, const uint8_t *iv, size_t iv_len)
{
    comb_job j;
    comb_job_init(&j);
    j.key = key;
    j.in = in;
    j.len = len;
    j.out = out;
    j.out_cap = out_cap;
    j.iv = iv;
    j.iv_len = iv_len;
    return j;
}

/* Prints the verdict; the program's exit status. */
static inline int test_finish(const char *name)
{
    if (test_failures != 0) {
        fprintf(stderr, "%s: %d check(s) FAILED\n", name, test_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif

/* ABI checks: the compiled header's comb_job layout against the library's, every declared
 * function linked and callable, versions, names, key/engine handle errors, and the
 * call-level errors of comb_process. */
#include "test_util.h"

#include <stddef.h>

/* Compile-time checks (C99 has no static_assert: a negative array size fails). */
typedef char check_job_size_[(sizeof(comb_job) == COMB_JOB_SIZE_V1) ? 1 : -1];
typedef char check_size_t_is_pointer_wide_[(sizeof(size_t) == sizeof(void *)) ? 1 : -1];
typedef char check_size_first_[(offsetof(comb_job, size) == 0) ? 1 : -1];

/* Every function of the header, by address: a missing symbol fails the link. */
typedef void (*any_fn)(void);
static const struct {
    const char *name;
    any_fn fn;
} functions[] = {
#define FN(f) {#f, (any_fn)f}
    FN(comb_abi_version), FN(comb_version),     FN(comb_strerror),      FN(comb_alg_name),
    FN(comb_alg_from_name), FN(comb_iv_len),    FN(comb_tag_len_range), FN(comb_output_len),
    FN(comb_iv_len_range), FN(comb_tag_len_allowed),
    FN(comb_key_new),     FN(comb_key_free),    FN(comb_engine_new),    FN(comb_engine_free),
    FN(comb_engine_backend), FN(comb_job_layout), FN(comb_process),
#undef FN
};

/* alignof(comb_job) in C99: the offset of a comb_job after a char. */
struct align_probe {
    char c;
    comb_job j;
};

static void layout(void)
{
    size_t want[] = {
        sizeof(comb_job),
        offsetof(struct align_probe, j), /* alignof(comb_job) in C99 */
        offsetof(comb_job, size),    offsetof(comb_job, flags),   offsetof(comb_job, in),
        offsetof(comb_job, out),     offsetof(comb_job, len),     offsetof(comb_job, out_cap),
        offsetof(comb_job, key),     offsetof(comb_job, iv),      offsetof(comb_job, iv_len),
        offsetof(comb_job, ad),      offsetof(comb_job, ad_len),  offsetof(comb_job, tag),
        offsetof(comb_job, tag_len), offsetof(comb_job, status),  offsetof(comb_job, reserved),
        offsetof(comb_job, out_len), offsetof(comb_job, user_data),
    };
    size_t n = sizeof want / sizeof want[0];
    size_t got[32];
    size_t total = comb_job_layout(got, 32);
    size_t i;
    CHECK(total == n);
    for (i = 0; i < n && i < total; i++) {
        if (got[i] != want[i]) {
            fprintf(stderr, "comb_job layout value %lu: library %lu, header %lu\n",
                    (unsigned long)i, (unsigned long)got[i], (unsigned long)want[i]);
            test_failures++;
        }
    }
    /* n == 0 with NULL is a size query. */
    CHECK(comb_job_layout(NULL, 0) == n);
}

static void names_and_versions(void)
{
    static const uint32_t algs[] = {COMB_ALG_AES_ECB, COMB_ALG_AES_CBC, COMB_ALG_AES_CBC_PKCS7,
                                    COMB_ALG_AES_CTR, COMB_ALG_AES_CFB128, COMB_ALG_AES_OFB,
                                    COMB_ALG_AES_CMAC, COMB_ALG_AES_GCM};
    size_t i;
    int code;
    CHECK(comb_abi_version() == COMB_ABI_VERSION);
    CHECK(comb_version() != NULL && strlen(comb_version()) > 0);
    for (i = 0; i < sizeof algs / sizeof algs[0]; i++) {
        const char *name = comb_alg_name(algs[i]);
        uint32_t back = 0;
        CHECK(name != NULL);
        if (name == NULL)
            continue;
        CHECK_CODE(comb_alg_from_name(name, &back), COMB_OK);
        CHECK(back == algs[i]);
    }
    CHECK(strcmp(comb_alg_name(COMB_ALG_AES_CBC_PKCS7), "aes-cbc-pkcs7") == 0);
    CHECK(comb_alg_name(0) == NULL);
    CHECK(comb_alg_name(1000) == NULL);
    {
        uint32_t a = 77;
        CHECK_CODE(comb_alg_from_name("aes-xts", &a), COMB_ERR_UNKNOWN_ALGORITHM);
        CHECK_CODE(comb_alg_from_name(NULL, &a), COMB_ERR_NULL_POINTER);
        CHECK_CODE(comb_alg_from_name("aes-cbc", NULL), COMB_ERR_NULL_POINTER);
    }
    /* Every code has its own description; unknown codes get a generic one. */
    for (code = -200; code <= 0; code++) {
        const char *s = comb_strerror(code);
        CHECK(s != NULL);
    }
    CHECK(strcmp(comb_strerror(COMB_OK), "success") == 0);
    CHECK(strcmp(comb_strerror(COMB_ERR_OVERLAP), comb_strerror(COMB_ERR_NULL_POINTER)) != 0);
    CHECK(strcmp(comb_strerror(12345), "unknown error code") == 0);
    CHECK(strcmp(comb_strerror(COMB_ERR_AUTH_FAILED), "authentication failed") == 0);
}

static void sizes(void)
{
    size_t v = 99, lo = 99, hi = 99;
    CHECK_CODE(comb_iv_len(COMB_ALG_AES_CBC, &v), COMB_OK);
    CHECK(v == 16);
    CHECK_CODE(comb_iv_len(COMB_ALG_AES_ECB, &v), COMB_OK);
    CHECK(v == 0);
    CHECK_CODE(comb_iv_len(99, &v), COMB_ERR_UNKNOWN_ALGORITHM);
    CHECK_CODE(comb_iv_len(COMB_ALG_AES_CTR, NULL), COMB_ERR_NULL_POINTER);
    CHECK_CODE(comb_tag_len_range(COMB_ALG_AES_CMAC, &lo, &hi), COMB_OK);
    CHECK(lo == 1 && hi == 16);
    CHECK_CODE(comb_tag_len_range(COMB_ALG_AES_CTR, &lo, &hi), COMB_OK);
    CHECK(lo == 0 && hi == 0);
    CHECK_CODE(comb_tag_len_range(COMB_ALG_AES_GCM, &lo, &hi), COMB_OK);
    CHECK(lo == 4 && hi == 16);
    CHECK_CODE(comb_tag_len_allowed(COMB_ALG_AES_GCM, 12), 1);
    CHECK_CODE(comb_tag_len_allowed(COMB_ALG_AES_GCM, 10), 0);
    CHECK_CODE(comb_tag_len_allowed(COMB_ALG_AES_CMAC, 10), 1);
    CHECK_CODE(comb_tag_len_allowed(COMB_ALG_AES_CMAC, 17), 0);
    CHECK_CODE(comb_tag_len_allowed(COMB_ALG_AES_CBC, 16), 0);
    CHECK_CODE(comb_tag_len_allowed(99, 16), COMB_ERR_UNKNOWN_ALGORITHM);
    CHECK_CODE(comb_iv_len_range(COMB_ALG_AES_CBC, &lo, &hi), COMB_OK);
    CHECK(lo == 16 && hi == 16);
    CHECK_CODE(comb_iv_len_range(COMB_ALG_AES_CMAC, &lo, &hi), COMB_OK);
    CHECK(lo == 0 && hi == 0);
    CHECK_CODE(comb_iv_len_range(COMB_ALG_AES_GCM, &lo, &hi), COMB_OK);
    CHECK(lo == 1 && hi > 1000000);
    CHECK_CODE(comb_iv_len(COMB_ALG_AES_GCM, &v), COMB_OK);
    CHECK(v == 12);
    CHECK_CODE(comb_iv_len_range(COMB_ALG_AES_GCM, NULL, &hi), COMB_ERR_NULL_POINTER);
    CHECK_CODE(comb_output_len(COMB_ALG_AES_CBC_PKCS7, COMB_OP_ENCRYPT, 16, &v), COMB_OK);
    CHECK(v == 32);
    CHECK_CODE(comb_output_len(COMB_ALG_AES_CBC_PKCS7, COMB_OP_ENCRYPT, 15, &v), COMB_OK);
    CHECK(v == 16);
    CHECK_CODE(comb_output_len(COMB_ALG_AES_CBC_PKCS7, COMB_OP_DECRYPT, 32, &v), COMB_OK);
    CHECK(v == 32);
    CHECK_CODE(comb_output_len(COMB_ALG_AES_CMAC, COMB_OP_MAC_GENERATE, 100, &v), COMB_OK);
    CHECK(v == 0);
    CHECK_CODE(comb_output_len(COMB_ALG_AES_CTR, 7, 100, &v), COMB_ERR_UNKNOWN_OP);
    CHECK_CODE(comb_output_len(COMB_ALG_AES_CBC_PKCS7, COMB_OP_ENCRYPT, (size_t)-1, &v),
               COMB_ERR_INVALID_ARGUMENT);
    /* Julius and COPA expand encrypting and shrink decrypting. */
    CHECK_CODE(comb_output_len(COMB_ALG_AES128_JULIUS, COMB_OP_ENCRYPT, 17, &v), COMB_OK);
    CHECK(v == 48);
    CHECK_CODE(comb_output_len(COMB_ALG_AES128_JULIUS, COMB_OP_DECRYPT, 48, &v), COMB_OK);
    CHECK(v == 32);
    CHECK_CODE(comb_output_len(COMB_ALG_AES128_COPA, COMB_OP_ENCRYPT, 0, &v), COMB_OK);
    CHECK(v == 17);
    CHECK_CODE(comb_output_len(COMB_ALG_AES128_COPA, COMB_OP_DECRYPT, 17, &v), COMB_OK);
    CHECK(v == 16);
    /* An output longer than PTRDIFF_MAX cannot be held by any buffer. */
    CHECK_CODE(comb_output_len(COMB_ALG_AES128_JULIUS, COMB_OP_ENCRYPT, (size_t)-1, &v),
               COMB_ERR_INVALID_ARGUMENT);
    CHECK_CODE(comb_output_len(COMB_ALG_AES128_COPA, COMB_OP_ENCRYPT, (size_t)PTRDIFF_MAX, &v),
               COMB_ERR_INVALID_ARGUMENT);
    CHECK_CODE(comb_output_len(COMB_ALG_AES_CTR, COMB_OP_ENCRYPT, (size_t)PTRDIFF_MAX, &v), COMB_OK);
    CHECK(v == (size_t)PTRDIFF_MAX);
}

static void handles(void)
{
    uint8_t raw[33] = {0};
    comb_key *key = (comb_key *)(void *)raw; /* must be overwritten with NULL on error */
    comb_engine *engine = NULL;
    size_t len;
    CHECK_CODE(comb_key_new(raw, 20, &key), COMB_ERR_INVALID_KEY_LENGTH);
    CHECK(key == NULL);
    CHECK_CODE(comb_key_new(raw, 0, &key), COMB_ERR_INVALID_KEY_LENGTH);
    CHECK_CODE(comb_key_new(raw, 33, &key), COMB_ERR_INVALID_KEY_LENGTH);
    CHECK_CODE(comb_key_new(NULL, 16, &key), COMB_ERR_NULL_POINTER);
    CHECK_CODE(comb_key_new(raw, 16, NULL), COMB_ERR_NULL_POINTER);
    for (len = 16; len <= 32; len += 8) {
        CHECK_CODE(comb_key_new(raw, len, &key), COMB_OK);
        CHECK(key != NULL);
        comb_key_free(key);
    }
    comb_key_free(NULL);
    comb_engine_free(NULL);
    CHECK_CODE(comb_engine_new(NULL), COMB_ERR_NULL_POINTER);
    CHECK_CODE(comb_engine_new(&engine), COMB_OK);
    CHECK(engine != NULL);
    CHECK(comb_engine_backend(engine) != NULL);
    CHECK(comb_engine_backend(NULL) == NULL);
    printf("backend: %s\n", comb_engine_backend(engine));
    comb_engine_free(engine);
}

static void call_level_errors(void)
{
    comb_engine *engine = engine_or_die();
    comb_key *key = key_filled(1, 16);
    uint8_t buf[32] = {0}, iv[16] = {0};
    comb_job jobs[2];
    jobs[0] = make_job(key, buf, 16, buf, 16, iv, 16);
    jobs[1] = make_job(key, buf + 16, 16, buf + 16, 16, iv, 16);

    /* Unknown algorithm / op / NULL engine: returned, and written to every job. */
    CHECK_CODE(comb_process(engine, 0, COMB_OP_ENCRYPT, jobs, 2), COMB_ERR_UNKNOWN_ALGORITHM);
    CHECK_CODE(jobs[0].status, COMB_ERR_UNKNOWN_ALGORITHM);
    CHECK_CODE(jobs[1].status, COMB_ERR_UNKNOWN_ALGORITHM);
    CHECK_CODE(comb_process(engine, 4242, COMB_OP_ENCRYPT, jobs, 2), COMB_ERR_UNKNOWN_ALGORITHM);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, 0, jobs, 2), COMB_ERR_UNKNOWN_OP);
    CHECK_CODE(jobs[1].status, COMB_ERR_UNKNOWN_OP);
    CHECK_CODE(comb_process(NULL, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, jobs, 2),
               COMB_ERR_NULL_POINTER);
    CHECK_CODE(jobs[0].status, COMB_ERR_NULL_POINTER);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, NULL, 2),
               COMB_ERR_NULL_POINTER);
    /* An empty batch is fine, even with a NULL array. */
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, NULL, 0), COMB_OK);
    CHECK_CODE(comb_process(engine, 99, COMB_OP_ENCRYPT, NULL, 0), COMB_ERR_UNKNOWN_ALGORITHM);
    /* First job's size: too small, not a multiple of the alignment, absurd. No job touched. */
    jobs[0].size = 8;
    jobs[1].status = 1;
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, jobs, 2),
               COMB_ERR_JOB_SIZE);
    CHECK(jobs[1].status == 1);
    jobs[0].size = (uint32_t)sizeof(comb_job) + 1;
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, jobs, 1),
               COMB_ERR_JOB_SIZE);
    jobs[0].size = COMB_JOB_SIZE_MAX + 8;
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, jobs, 1),
               COMB_ERR_JOB_SIZE);
    jobs[0].size = 0;
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, jobs, 1),
               COMB_ERR_JOB_SIZE);
    /* Misaligned array. */
    {
        static union {
            comb_job j[2];
            unsigned char bytes[2 * sizeof(comb_job) + 8];
        } u;
        comb_job *odd = (comb_job *)(void *)(u.bytes + 4);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, odd, 1),
                   COMB_ERR_INVALID_ARGUMENT);
    }
    /* And the array works once fixed. */
    jobs[0].size = (uint32_t)sizeof(comb_job);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, jobs, 2), COMB_OK);
    CHECK(jobs[0].status == COMB_OK && jobs[0].out_len == 16);
    CHECK(jobs[1].status == COMB_OK && jobs[1].out_len == 16);

    comb_key_free(key);
    comb_engine_free(engine);
}

int main(void)
{
    size_t i;
    for (i = 0; i < sizeof functions / sizeof functions[0]; i++)
        CHECK(functions[i].fn != NULL);
    layout();
    names_and_versions();
    sizes();
    handles();
    call_level_errors();
    return test_finish("abi");
}

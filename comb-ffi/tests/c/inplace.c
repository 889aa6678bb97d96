/* In-place use (in == out): every mode and direction gives the bytes of the out-of-place
 * call, in one batch mixing in-place and out-of-place jobs; CBC-PKCS7 grows and shrinks in
 * place; partial overlaps are rejected with the buffer untouched; adjacent buffers are not
 * overlaps. */
#include "test_util.h"

#define N 48
#define CAP 1600

static comb_engine *engine;
static comb_key *key128, *key256;

static const uint32_t algs[] = {COMB_ALG_AES_ECB,    COMB_ALG_AES_CBC, COMB_ALG_AES_CBC_PKCS7,
                                COMB_ALG_AES_CTR,    COMB_ALG_AES_CFB128, COMB_ALG_AES_OFB};

static size_t len_for(uint32_t alg, uint32_t op, size_t i)
{
    size_t len = i < 34 ? i * 3 : 1400 + i;
    if (alg == COMB_ALG_AES_ECB || alg == COMB_ALG_AES_CBC ||
        (alg == COMB_ALG_AES_CBC_PKCS7 && op == COMB_OP_DECRYPT))
        len = (len / 16 + (op == COMB_OP_DECRYPT && alg == COMB_ALG_AES_CBC_PKCS7)) * 16;
    return len;
}

static void same_as_out_of_place(uint32_t alg, uint32_t op)
{
    static uint8_t src[N][CAP], buf[N][CAP], ref[N][CAP];
    comb_job in_place[N], copy[N];
    uint8_t iv[16];
    size_t iv_len = alg == COMB_ALG_AES_ECB ? 0 : 16;
    size_t i;
    fill_pattern(iv, 16, alg);

    /* For PKCS#7 decryption, make valid ciphertexts first. */
    for (i = 0; i < N; i++) {
        size_t len = len_for(alg, op, i);
        fill_pattern(src[i], CAP, (unsigned)(i + 100 * alg));
        if (alg == COMB_ALG_AES_CBC_PKCS7 && op == COMB_OP_DECRYPT) {
            comb_job e = make_job(i % 2 ? key256 : key128, src[i], len - 1 - i % 16, buf[i],
                                  CAP, iv, 16);
            CHECK_CODE(comb_process(engine, alg, COMB_OP_ENCRYPT, &e, 1), COMB_OK);
            CHECK(e.out_len == len);
            memcpy(src[i], buf[i], len);
        }
    }
    /* Reference: out of place, one batch. */
    for (i = 0; i < N; i++)
        copy[i] = make_job(i % 2 ? key256 : key128, src[i], len_for(alg, op, i), ref[i], CAP,
                           iv, iv_len);
    CHECK_CODE(comb_process(engine, alg, op, copy, N), COMB_OK);

    /* In place, one batch; every third job (when it fits) out of place into the second half of
     * its own buffer instead. */
    for (i = 0; i < N; i++) {
        size_t len = len_for(alg, op, i);
        const comb_key *k = i % 2 ? key256 : key128;
        memcpy(buf[i], src[i], CAP);
        if (i % 3 == 2 && len + 16 <= CAP / 2)
            in_place[i] = make_job(k, buf[i], len, buf[i] + CAP / 2, CAP / 2, iv, iv_len);
        else
            in_place[i] = make_job(k, buf[i], len, buf[i], CAP, iv, iv_len);
    }
    CHECK_CODE(comb_process(engine, alg, op, in_place, N), COMB_OK);
    for (i = 0; i < N; i++) {
        const uint8_t *got = in_place[i].out;
        CHECK_CODE(in_place[i].status, COMB_OK);
        CHECK(in_place[i].out_len == copy[i].out_len);
        if (memcmp(got, ref[i], copy[i].out_len) != 0) {
            fprintf(stderr, "%s op %u job %lu: in place differs from out of place\n",
                    comb_alg_name(alg), (unsigned)op, (unsigned long)i);
            test_failures++;
        }
    }
}

static void pkcs7_grows_and_shrinks_in_place(void)
{
    uint8_t buf[64], msg[64], iv[16] = {7};
    size_t len;
    for (len = 0; len <= 40; len++) {
        size_t padded = (len / 16 + 1) * 16;
        comb_job j;
        fill_pattern(msg, len, (unsigned)len);
        memcpy(buf, msg, len);
        /* No room for the padding: rejected, buffer unchanged. */
        j = make_job(key128, buf, len, buf, padded - 1, iv, 16);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC_PKCS7, COMB_OP_ENCRYPT, &j, 1),
                   COMB_ERR_JOBS_FAILED);
        CHECK_CODE(j.status, COMB_ERR_OUTPUT_TOO_SHORT);
        CHECK(memcmp(buf, msg, len) == 0);
        /* Room: grows to the padded length in place, and shrinks back. */
        j = make_job(key128, buf, len, buf, padded, iv, 16);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC_PKCS7, COMB_OP_ENCRYPT, &j, 1),
                   COMB_OK);
        CHECK(j.out_len == padded);
        j = make_job(key128, buf, padded, buf, padded, iv, 16);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC_PKCS7, COMB_OP_DECRYPT, &j, 1),
                   COMB_OK);
        CHECK(j.out_len == len);
        CHECK(memcmp(buf, msg, len) == 0);
    }
}

static void overlaps(void)
{
    static const long shifts[] = {1, -1, 15, -15, 16, -16, 63, -63};
    uint8_t buf[256], before[256], iv[16] = {0};
    comb_job j;
    size_t s;
    fill_pattern(buf, sizeof buf, 5);
    memcpy(before, buf, sizeof buf);
    for (s = 0; s < sizeof shifts / sizeof shifts[0]; s++) {
        uint8_t *in = buf + 96;
        uint8_t *out = in + shifts[s];
        j = make_job(key128, in, 64, out, 64, iv, 16);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CTR, COMB_OP_ENCRYPT, &j, 1),
                   COMB_ERR_JOBS_FAILED);
        CHECK_CODE(j.status, COMB_ERR_OVERLAP);
        CHECK(j.out_len == 0);
        CHECK(memcmp(buf, before, sizeof buf) == 0);
    }
    /* Output capacity reaching back over the input: overlap even if len would fit. */
    j = make_job(key128, buf + 100, 32, buf + 64, 40, iv, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CTR, COMB_OP_ENCRYPT, &j, 1),
               COMB_ERR_JOBS_FAILED);
    CHECK_CODE(j.status, COMB_ERR_OVERLAP);
    /* In place with a capacity below the message: too short, not an overlap. */
    j = make_job(key128, buf, 64, buf, 48, iv, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CTR, COMB_OP_ENCRYPT, &j, 1),
               COMB_ERR_JOBS_FAILED);
    CHECK_CODE(j.status, COMB_ERR_OUTPUT_TOO_SHORT);
    CHECK(memcmp(buf, before, sizeof buf) == 0);
    /* Adjacent input and output: not an overlap. */
    j = make_job(key128, buf, 64, buf + 64, 64, iv, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CTR, COMB_OP_ENCRYPT, &j, 1), COMB_OK);
    j = make_job(key128, buf + 64, 64, buf, 64, iv, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CTR, COMB_OP_ENCRYPT, &j, 1), COMB_OK);
    /* Empty in place, and a MAC whose out equals in (out is ignored for MACs). */
    j = make_job(key128, buf, 0, buf, 0, iv, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CTR, COMB_OP_ENCRYPT, &j, 1), COMB_OK);
    {
        uint8_t tag[16];
        j = make_job(key128, buf, 64, buf, 64, NULL, 0);
        j.tag = tag;
        j.tag_len = 16;
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CMAC, COMB_OP_MAC_GENERATE, &j, 1),
                   COMB_OK);
    }
}

int main(void)
{
    size_t a;
    engine = engine_or_die();
    key128 = key_filled(0xa1, 16);
    key256 = key_filled(0xb2, 32);
    for (a = 0; a < sizeof algs / sizeof algs[0]; a++) {
        same_as_out_of_place(algs[a], COMB_OP_ENCRYPT);
        same_as_out_of_place(algs[a], COMB_OP_DECRYPT);
    }
    pkcs7_grows_and_shrinks_in_place();
    overlaps();
    comb_key_free(key128);
    comb_key_free(key256);
    comb_engine_free(engine);
    return test_finish("inplace");
}

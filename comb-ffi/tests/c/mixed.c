/* Mixed batches: every algorithm, keys of all three sizes, lengths from 0 to 1500 bytes, in
 * one call per algorithm, with invalid jobs (NULL pointers, overlaps within and across jobs,
 * bad lengths, bad fields) mixed in. Checks each job's status in input order, that valid jobs
 * give the same bytes as one-job calls, and that invalid jobs' outputs are left untouched. */
#include "test_util.h"

#include <stdint.h>

#define SENTINEL 0x5a
#define MAX_JOBS 96
#define BUF 1536

static comb_engine *engine;
static comb_key *keys[3];

/* The expected status of each job of the batch being built. */
static int expect[MAX_JOBS];

static const uint32_t plain_algs[] = {COMB_ALG_AES_ECB,    COMB_ALG_AES_CBC,
                                      COMB_ALG_AES_CBC_PKCS7, COMB_ALG_AES_CTR,
                                      COMB_ALG_AES_CFB128, COMB_ALG_AES_OFB};

static int whole_blocks(uint32_t alg, uint32_t op)
{
    return alg == COMB_ALG_AES_ECB || alg == COMB_ALG_AES_CBC ||
           (alg == COMB_ALG_AES_CBC_PKCS7 && op == COMB_OP_DECRYPT);
}

/* A realistic length for job i, rounded to blocks where the mode needs it. */
static size_t length_for(size_t i, uint32_t alg)
{
    static const size_t lens[] = {0, 1, 15, 16, 17, 40, 64, 100, 576, 1000, 1400, 1440, 1500, 31};
    size_t len = lens[i % (sizeof lens / sizeof lens[0])];
    if (whole_blocks(alg, COMB_OP_ENCRYPT))
        len -= len % 16;
    return len;
}

static int all_equal(const uint8_t *p, size_t n, uint8_t v)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

static void plain_batch(uint32_t alg)
{
    static uint8_t in[MAX_JOBS][BUF], out[MAX_JOBS][BUF], ref[BUF], back[BUF];
    static uint8_t ivs[MAX_JOBS][16];
    static uint8_t shared[4 * BUF];
    static uint8_t spare_tag[16];
    comb_job jobs[MAX_JOBS];
    size_t iv_len = alg == COMB_ALG_AES_ECB ? 0 : 16;
    size_t n = 0, i, out_need;
    int valid_count = 0;

    memset(out, SENTINEL, sizeof out);
    for (i = 0; i < 40; i++) {
        size_t len = length_for(i, alg);
        fill_pattern(in[n], len, (unsigned)(alg * 1000 + i));
        fill_pattern(ivs[n], 16, (unsigned)(alg * 7000 + i));
        comb_output_len(alg, COMB_OP_ENCRYPT, len, &out_need);
        jobs[n] = make_job(keys[i % 3], in[n], len, out[n], BUF, ivs[n], iv_len);
        jobs[n].user_data = &jobs[n];
        jobs[n].reserved = 0xdeadbeefu;
        expect[n] = COMB_OK;
        n++;
        valid_count++;

        /* Every fourth valid job is followed by an invalid one, of a different kind each time. */
        if (i % 4 == 3) {
            comb_job bad = make_job(keys[0], in[n], 32, out[n], BUF, ivs[n], iv_len);
            fill_pattern(in[n], 32, 99);
            switch ((i / 4) % 10) {
            case 0: /* NULL input with a length */
                bad.in = NULL;
                expect[n] = COMB_ERR_NULL_POINTER;
                break;
            case 1: /* NULL key */
                bad.key = NULL;
                expect[n] = COMB_ERR_NULL_POINTER;
                break;
            case 2: /* output overlaps the input by all but one byte */
                memcpy(out[n], in[n], 32);
                bad.in = out[n];
                bad.out = out[n] + 1;
                bad.out_cap = BUF - 1;
                memset(out[n], SENTINEL, BUF);
                expect[n] = COMB_ERR_OVERLAP;
                break;
            case 3: /* wrong IV length */
                bad.iv_len = iv_len == 0 ? 16 : 8;
                expect[n] = COMB_ERR_INVALID_IV_LENGTH;
                break;
            case 4: /* output one byte short */
                comb_output_len(alg, COMB_OP_ENCRYPT, 32, &out_need);
                bad.out_cap = out_need - 1;
                expect[n] = COMB_ERR_OUTPUT_TOO_SHORT;
                break;
            case 5: /* reserved flags */
                bad.flags = 1;
                expect[n] = COMB_ERR_INVALID_ARGUMENT;
                break;
            case 6: /* associated data for a mode without */
                bad.ad = ivs[n];
                bad.ad_len = 16;
                expect[n] = COMB_ERR_AD_NOT_SUPPORTED;
                break;
            case 7: /* a tag for a mode without (its own buffer: a written tag on the IV
                     * would be an overlap) */
                bad.tag = spare_tag;
                bad.tag_len = 16;
                expect[n] = COMB_ERR_TAG_MISUSE;
                break;
            case 8: /* the IV lies inside the output buffer */
                if (iv_len == 0) {
                    bad.out = NULL; /* NULL output with a capacity */
                    expect[n] = COMB_ERR_NULL_POINTER;
                } else {
                    bad.iv = out[n] + 64;
                    expect[n] = COMB_ERR_OVERLAP;
                }
                break;
            default: /* a range that wraps around the address space */
                bad.len = SIZE_MAX - 8;
                expect[n] = COMB_ERR_INVALID_ARGUMENT;
                break;
            }
            jobs[n] = bad;
            n++;
        }
    }
    /* Not a whole number of blocks. */
    if (whole_blocks(alg, COMB_OP_ENCRYPT)) {
        jobs[n] = make_job(keys[1], in[0], 17, out[n], BUF, ivs[0], iv_len);
        expect[n++] = COMB_ERR_NOT_BLOCK_MULTIPLE;
    }
    /* Two jobs writing overlapping ranges of one buffer: both rejected. */
    jobs[n] = make_job(keys[2], in[0], 32, shared, 64, ivs[0], iv_len);
    expect[n++] = COMB_ERR_OVERLAP;
    jobs[n] = make_job(keys[2], in[1], 32, shared + 48, 64, ivs[0], iv_len);
    expect[n++] = COMB_ERR_OVERLAP;
    /* A job reading what another job writes: both rejected. */
    jobs[n] = make_job(keys[0], in[2], 32, shared + 1024, 64, ivs[0], iv_len);
    expect[n++] = COMB_ERR_OVERLAP;
    jobs[n] = make_job(keys[0], shared + 1024 + 63, 16, shared + 2048, 64, ivs[0], iv_len);
    expect[n++] = COMB_ERR_OVERLAP;
    /* Adjacent (not overlapping) outputs, one shared input and IV: fine. */
    jobs[n] = make_job(keys[1], in[3], 32, shared + 3072, 48, ivs[3], iv_len);
    expect[n++] = COMB_OK;
    jobs[n] = make_job(keys[1], in[3], 32, shared + 3072 + 48, 48, ivs[3], iv_len);
    expect[n++] = COMB_OK;
    /* A job with another size field than the first job. */
    jobs[n] = make_job(keys[0], in[0], 16, out[n], BUF, ivs[0], iv_len);
    jobs[n].size += 8;
    expect[n++] = COMB_ERR_JOB_SIZE;
    CHECK(n <= MAX_JOBS);

    CHECK_CODE(comb_process(engine, alg, COMB_OP_ENCRYPT, jobs, n), COMB_ERR_JOBS_FAILED);
    for (i = 0; i < n; i++) {
        if (jobs[i].status != expect[i]) {
            fprintf(stderr, "%s job %lu: status %d (%s), expected %d (%s)\n",
                    comb_alg_name(alg), (unsigned long)i, jobs[i].status,
                    comb_strerror(jobs[i].status), expect[i], comb_strerror(expect[i]));
            test_failures++;
            continue;
        }
        if (expect[i] != COMB_OK) {
            CHECK(jobs[i].out_len == 0);
            if (jobs[i].out >= &out[0][0] && jobs[i].out < &out[MAX_JOBS - 1][0] + BUF)
                CHECK(all_equal(out[i], BUF, SENTINEL));
            continue;
        }
        /* Valid: the same bytes as the job alone, and nothing written past out_len. */
        {
            comb_job one = jobs[i];
            size_t want_len;
            comb_output_len(alg, COMB_OP_ENCRYPT, jobs[i].len, &want_len);
            CHECK(jobs[i].out_len == want_len);
            one.out = ref;
            one.out_cap = sizeof ref;
            CHECK_CODE(comb_process(engine, alg, COMB_OP_ENCRYPT, &one, 1), COMB_OK);
            CHECK(one.out_len == want_len);
            CHECK(memcmp(ref, jobs[i].out, want_len) == 0);
            if (jobs[i].out_cap == BUF)
                CHECK(all_equal(jobs[i].out + want_len, BUF - want_len, SENTINEL));
            /* And it decrypts back. */
            one = jobs[i];
            one.in = jobs[i].out;
            one.len = want_len;
            one.out = back;
            one.out_cap = sizeof back;
            CHECK_CODE(comb_process(engine, alg, COMB_OP_DECRYPT, &one, 1), COMB_OK);
            CHECK(one.out_len == jobs[i].len);
            CHECK(memcmp(back, jobs[i].in, jobs[i].len) == 0);
        }
        if (i < 40) {
            CHECK(jobs[i].user_data == &jobs[i]);
            CHECK(jobs[i].reserved == 0xdeadbeefu);
        }
    }
    CHECK(valid_count == 40);
}

static void cmac_batch(void)
{
    static uint8_t msg[MAX_JOBS][BUF];
    uint8_t tags[MAX_JOBS][16], want[16];
    uint8_t iv[16] = {0};
    comb_job jobs[MAX_JOBS];
    size_t n = 0, i;

    for (i = 0; i < 32; i++) {
        size_t len = length_for(i, COMB_ALG_AES_CMAC);
        fill_pattern(msg[n], len, (unsigned)i);
        memset(tags[n], SENTINEL, 16);
        jobs[n] = make_job(keys[i % 3], msg[n], len, NULL, 0, NULL, 0);
        jobs[n].tag = tags[n];
        jobs[n].tag_len = 1 + i % 16;
        expect[n++] = COMB_OK;
    }
    /* Invalid ones. */
    jobs[n] = make_job(keys[0], msg[0], 16, NULL, 0, NULL, 0); /* no tag */
    expect[n++] = COMB_ERR_TAG_MISUSE;
    jobs[n] = make_job(keys[0], msg[0], 16, NULL, 0, NULL, 0);
    jobs[n].tag = tags[n];
    jobs[n].tag_len = 17;
    expect[n++] = COMB_ERR_INVALID_TAG_LENGTH;
    jobs[n] = make_job(keys[0], msg[0], 16, NULL, 0, NULL, 0);
    jobs[n].tag_len = 16; /* NULL tag with a length */
    expect[n++] = COMB_ERR_NULL_POINTER;
    jobs[n] = make_job(keys[0], msg[n], 64, NULL, 0, NULL, 0);
    jobs[n].tag = msg[n] + 60; /* generated tag would overwrite the message */
    jobs[n].tag_len = 16;
    expect[n++] = COMB_ERR_OVERLAP;
    jobs[n] = make_job(keys[0], msg[0], 16, NULL, 0, iv, 16);
    jobs[n].tag = tags[n];
    jobs[n].tag_len = 16;
    expect[n++] = COMB_ERR_INVALID_IV_LENGTH;

    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CMAC, COMB_OP_MAC_GENERATE, jobs, n),
               COMB_ERR_JOBS_FAILED);
    for (i = 0; i < n; i++) {
        CHECK_CODE(jobs[i].status, expect[i]);
        if (i < 32) {
            comb_job one = jobs[i];
            one.tag = want;
            one.tag_len = 16;
            CHECK_CODE(comb_process(engine, COMB_ALG_AES_CMAC, COMB_OP_MAC_GENERATE, &one, 1),
                       COMB_OK);
            CHECK(memcmp(want, tags[i], jobs[i].tag_len) == 0);
            CHECK(jobs[i].tag_len == 16 || tags[i][jobs[i].tag_len] == SENTINEL);
        }
    }

    /* Verification: every other tag corrupted; a tag inside the message is fine (read-only). */
    n = 32;
    for (i = 0; i < n; i++) {
        if (i % 2 == 1)
            tags[i][0] ^= 0x01;
        expect[i] = i % 2 == 1 ? COMB_ERR_AUTH_FAILED : COMB_OK;
    }
    memcpy(msg[40], msg[2], BUF);
    jobs[n] = jobs[2];
    jobs[n].in = msg[40];
    memcpy(msg[40] + 200, tags[2], jobs[2].tag_len);
    jobs[n].tag = msg[40] + 200;
    jobs[n].len = jobs[2].len;
    expect[n++] = COMB_OK;
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CMAC, COMB_OP_MAC_VERIFY, jobs, n),
               COMB_ERR_JOBS_FAILED);
    for (i = 0; i < n; i++)
        CHECK_CODE(jobs[i].status, expect[i]);
}

static void pkcs7_errors(void)
{
    uint8_t pt[48], ct[64], out[64], iv[16] = {1};
    comb_job jobs[4];
    fill_pattern(pt, sizeof pt, 3);
    jobs[0] = make_job(keys[0], pt, 48, ct, sizeof ct, iv, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC_PKCS7, COMB_OP_ENCRYPT, jobs, 1), COMB_OK);
    CHECK(jobs[0].out_len == 64);
    /* Decrypt: good; wrong key (bad padding, output zeroed); empty; not whole blocks. */
    jobs[0] = make_job(keys[0], ct, 64, out, sizeof out, iv, 16);
    jobs[1] = make_job(keys[1], ct, 64, out, sizeof out, iv, 16);
    jobs[2] = make_job(keys[0], ct, 0, NULL, 0, iv, 16);
    jobs[3] = make_job(keys[0], ct, 63, NULL, 0, iv, 16);
    /* jobs[0] and jobs[1] write the same buffer: overlap. Give jobs[1] its own. */
    {
        uint8_t out1[64];
        memset(out1, SENTINEL, sizeof out1);
        jobs[1].out = out1;
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC_PKCS7, COMB_OP_DECRYPT, jobs, 4),
                   COMB_ERR_JOBS_FAILED);
        CHECK_CODE(jobs[0].status, COMB_OK);
        CHECK(jobs[0].out_len == 48 && memcmp(out, pt, 48) == 0);
        /* A wrong key gives random padding: almost always invalid (1 - ~1/256). */
        if (jobs[1].status == COMB_ERR_INVALID_PADDING)
            CHECK(all_equal(out1, 64, 0));
        else
            CHECK_CODE(jobs[1].status, COMB_OK);
        CHECK_CODE(jobs[2].status, COMB_ERR_INVALID_PADDING);
        CHECK_CODE(jobs[3].status, COMB_ERR_NOT_BLOCK_MULTIPLE);
    }
}

/* A caller compiled against a later header: bigger jobs, same prefix. */
struct job_v2 {
    comb_job v1;
    uint64_t extra[3];
};

static void forward_compatible_size(void)
{
    struct job_v2 jobs[3];
    uint8_t in[3][64], out[3][64], ref[64], iv[16] = {0};
    size_t i;
    for (i = 0; i < 3; i++) {
        fill_pattern(in[i], 64, (unsigned)i);
        jobs[i].v1 = make_job(keys[i], in[i], 64, out[i], 64, iv, 16);
        jobs[i].v1.size = (uint32_t)sizeof(struct job_v2);
        jobs[i].extra[0] = jobs[i].extra[1] = jobs[i].extra[2] = 0x1122334455667788ull;
    }
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_OFB, COMB_OP_ENCRYPT, &jobs[0].v1, 3),
               COMB_OK);
    for (i = 0; i < 3; i++) {
        comb_job one = make_job(keys[i], in[i], 64, ref, 64, iv, 16);
        CHECK_CODE(jobs[i].v1.status, COMB_OK);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_OFB, COMB_OP_ENCRYPT, &one, 1), COMB_OK);
        CHECK(memcmp(ref, out[i], 64) == 0);
        CHECK(jobs[i].extra[0] == 0x1122334455667788ull);
        CHECK(jobs[i].extra[2] == 0x1122334455667788ull);
    }
}

int main(void)
{
    size_t a;
    engine = engine_or_die();
    keys[0] = key_filled(0x11, 16);
    keys[1] = key_filled(0x22, 24);
    keys[2] = key_filled(0x33, 32);
    for (a = 0; a < sizeof plain_algs / sizeof plain_algs[0]; a++)
        plain_batch(plain_algs[a]);
    cmac_batch();
    pkcs7_errors();
    forward_compatible_size();
    for (a = 0; a < 3; a++)
        comb_key_free(keys[a]);
    comb_engine_free(engine);
    return test_finish("mixed");
}

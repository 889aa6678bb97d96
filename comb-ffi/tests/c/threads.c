/* Thread safety as documented: one engine and a few keys shared by 8 threads, each running
 * its own batches (own job arrays and buffers) concurrently; every result equals the one
 * computed before the threads started. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <pthread.h>

#define THREADS 8
#define JOBS 24
#define ROUNDS 150
#define LEN 512

static comb_engine *engine;
static comb_key *keys[3];
static uint8_t plain[JOBS][LEN], iv[16];
static uint8_t expect_cbc[JOBS][LEN];
static uint8_t expect_tag[JOBS][16];

static size_t len_of(size_t i)
{
    return 16 * (1 + (i * 7) % (LEN / 16));
}

struct worker {
    int failures;
};

static void *work(void *arg)
{
    struct worker *w = (struct worker *)arg;
    uint8_t out[JOBS][LEN], tags[JOBS][16];
    comb_job jobs[JOBS];
    int r;
    size_t i;
    for (r = 0; r < ROUNDS; r++) {
        uint32_t alg = r % 2 ? COMB_ALG_AES_CMAC : COMB_ALG_AES_CBC;
        for (i = 0; i < JOBS; i++) {
            if (alg == COMB_ALG_AES_CBC) {
                jobs[i] = make_job(keys[i % 3], plain[i], len_of(i), out[i], LEN, iv, 16);
            } else {
                jobs[i] = make_job(keys[i % 3], plain[i], len_of(i), NULL, 0, NULL, 0);
                jobs[i].tag = tags[i];
                jobs[i].tag_len = 16;
            }
        }
        if (comb_process(engine, alg, COMB_OP_ENCRYPT, jobs, JOBS) != COMB_OK) {
            w->failures++;
            continue;
        }
        for (i = 0; i < JOBS; i++) {
            if (alg == COMB_ALG_AES_CBC && memcmp(out[i], expect_cbc[i], len_of(i)) != 0)
                w->failures++;
            if (alg == COMB_ALG_AES_CMAC && memcmp(tags[i], expect_tag[i], 16) != 0)
                w->failures++;
        }
    }
    return NULL;
}

int main(void)
{
    pthread_t th[THREADS];
    struct worker w[THREADS];
    comb_job jobs[JOBS];
    size_t i;

    engine = engine_or_die();
    for (i = 0; i < 3; i++)
        keys[i] = key_filled((uint8_t)(0x40 + i), 16 + 8 * i);
    fill_pattern(iv, 16, 1);
    for (i = 0; i < JOBS; i++) {
        fill_pattern(plain[i], LEN, (unsigned)i);
        jobs[i] = make_job(keys[i % 3], plain[i], len_of(i), expect_cbc[i], LEN, iv, 16);
    }
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, jobs, JOBS), COMB_OK);
    for (i = 0; i < JOBS; i++) {
        jobs[i] = make_job(keys[i % 3], plain[i], len_of(i), NULL, 0, NULL, 0);
        jobs[i].tag = expect_tag[i];
        jobs[i].tag_len = 16;
    }
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_CMAC, COMB_OP_ENCRYPT, jobs, JOBS), COMB_OK);

    for (i = 0; i < THREADS; i++) {
        w[i].failures = 0;
        CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    }
    for (i = 0; i < THREADS; i++) {
        CHECK(pthread_join(th[i], NULL) == 0);
        if (w[i].failures != 0) {
            fprintf(stderr, "thread %lu: %d failures\n", (unsigned long)i, w[i].failures);
            test_failures++;
        }
    }
    for (i = 0; i < 3; i++)
        comb_key_free(keys[i]);
    comb_engine_free(engine);
    return test_finish("threads");
}

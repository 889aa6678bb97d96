/* AEAD through the C API: AES-GCM test cases 1-18 of the GCM specification (McGrew and
 * Viega; copied from testdata/kat/ciphers/aes/gcm_spec_testcases.kat: 12-, 8- and 60-byte
 * nonces, with and without AD), one job per call and all 18 as one batch, both directions,
 * truncated tags, a flipped tag (COMB_ERR_AUTH_FAILED, output zeroed), in-place use, and the
 * AEAD-specific errors (nonce length, tag length, tag direction, AD overlapping the output). */
#include "test_util.h"

struct gcm_kat {
    const char *id;
    const char *key, *iv, *ad, *pt, *ct, *tag;
};

static const struct gcm_kat kats[] = {
    {"GCM spec Test Case 1",
     "00000000000000000000000000000000",
     "000000000000000000000000",
     "",
     "",
     "",
     "58e2fccefa7e3061367f1d57a4e7455a"},
    {"GCM spec Test Case 2",
     "00000000000000000000000000000000",
     "000000000000000000000000",
     "",
     "00000000000000000000000000000000",
     "0388dace60b6a392f328c2b971b2fe78",
     "ab6e47d42cec13bdf53a67b21257bddf"},
    {"GCM spec Test Case 3",
     "feffe9928665731c6d6a8f9467308308",
     "cafebabefacedbaddecaf888",
     "",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
     "4d5c2af327cd64a62cf35abd2ba6fab4"},
    {"GCM spec Test Case 4",
     "feffe9928665731c6d6a8f9467308308",
     "cafebabefacedbaddecaf888",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
     "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"},
    {"GCM spec Test Case 5",
     "feffe9928665731c6d6a8f9467308308",
     "cafebabefacedbad",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "61353b4c2806934a777ff51fa22a4755699b2a714fcdc6f83766e5f97b6c7423"
     "73806900e49f24b22b097544d4896b424989b5e1ebac0f07c23f4598",
     "3612d2e79e3b0785561be14aaca2fccb"},
    {"GCM spec Test Case 6",
     "feffe9928665731c6d6a8f9467308308",
     "9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728"
     "c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "8ce24998625615b603a033aca13fb894be9112a5c3a211a8ba262a3cca7e2ca7"
     "01e4a9a4fba43c90ccdcb281d48c7c6fd62875d2aca417034c34aee5",
     "619cc5aefffe0bfa462af43c1699d050"},
    {"GCM spec Test Case 7",
     "000000000000000000000000000000000000000000000000",
     "000000000000000000000000",
     "",
     "",
     "",
     "cd33b28ac773f74ba00ed1f312572435"},
    {"GCM spec Test Case 8",
     "000000000000000000000000000000000000000000000000",
     "000000000000000000000000",
     "",
     "00000000000000000000000000000000",
     "98e7247c07f0fe411c267e4384b0f600",
     "2ff58d80033927ab8ef4d4587514f0fb"},
    {"GCM spec Test Case 9",
     "feffe9928665731c6d6a8f9467308308feffe9928665731c",
     "cafebabefacedbaddecaf888",
     "",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
     "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
     "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710acade256",
     "9924a7c8587336bfb118024db8674a14"},
    {"GCM spec Test Case 10",
     "feffe9928665731c6d6a8f9467308308feffe9928665731c",
     "cafebabefacedbaddecaf888",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
     "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710",
     "2519498e80f1478f37ba55bd6d27618c"},
    {"GCM spec Test Case 11",
     "feffe9928665731c6d6a8f9467308308feffe9928665731c",
     "cafebabefacedbad",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "0f10f599ae14a154ed24b36e25324db8c566632ef2bbb34f8347280fc4507057"
     "fddc29df9a471f75c66541d4d4dad1c9e93a19a58e8b473fa0f062f7",
     "65dcc57fcf623a24094fcca40d3533f8"},
    {"GCM spec Test Case 12",
     "feffe9928665731c6d6a8f9467308308feffe9928665731c",
     "9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728"
     "c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "d27e88681ce3243c4830165a8fdcf9ff1de9a1d8e6b447ef6ef7b79828666e45"
     "81e79012af34ddd9e2f037589b292db3e67c036745fa22e7e9b7373b",
     "dcf566ff291c25bbb8568fc3d376a6d9"},
    {"GCM spec Test Case 13",
     "0000000000000000000000000000000000000000000000000000000000000000",
     "000000000000000000000000",
     "",
     "",
     "",
     "530f8afbc74536b9a963b4f1c4cb738b"},
    {"GCM spec Test Case 14",
     "0000000000000000000000000000000000000000000000000000000000000000",
     "000000000000000000000000",
     "",
     "00000000000000000000000000000000",
     "cea7403d4d606b6e074ec5d3baf39d18",
     "d0d1c8a799996bf0265b98b5d48ab919"},
    {"GCM spec Test Case 15",
     "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
     "cafebabefacedbaddecaf888",
     "",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
     "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
     "b094dac5d93471bdec1a502270e3cc6c"},
    {"GCM spec Test Case 16",
     "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
     "cafebabefacedbaddecaf888",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
     "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
     "76fc6ece0f4e1768cddf8853bb2d551b"},
    {"GCM spec Test Case 17",
     "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
     "cafebabefacedbad",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "c3762df1ca787d32ae47c13bf19844cbaf1ae14d0b976afac52ff7d79bba9de0"
     "feb582d33934a4f0954cc2363bc73f7862ac430e64abe499f47c9b1f",
     "3a337dbf46a792c45e454913fe2ea8f2"},
    {"GCM spec Test Case 18",
     "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
     "9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728"
     "c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b",
     "feedfacedeadbeeffeedfacedeadbeefabaddad2",
     "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
     "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
     "5a8def2f0c9e53f1f75d7853659e2a20eeb2b22aafde6419a058ab4f6f746bf4"
     "0fc0c3b780f244452da3ebf1c5d82cdea2418997200ef82e44ae7e3f",
     "a44a8266ee1c8eb0c8b5d4cf5ae9f19a"},
};
#define N_KATS (sizeof kats / sizeof kats[0])

struct decoded {
    comb_key *key;
    uint8_t iv[64], ad[32], pt[64], ct[64], tag[16];
    size_t iv_len, ad_len, len;
};

static comb_engine *engine;
static struct decoded d[N_KATS];

static comb_job gcm_job(const struct decoded *v, const uint8_t *in, uint8_t *out, uint8_t *tag,
                        size_t tag_len)
{
    comb_job j = make_job(v->key, in, v->len, out, 64, v->iv, v->iv_len);
    j.ad = v->ad;
    j.ad_len = v->ad_len;
    j.tag = tag;
    j.tag_len = tag_len;
    return j;
}

static void single(size_t i)
{
    const struct decoded *v = &d[i];
    uint8_t out[64], tag[16];
    comb_job j;
    size_t tl;

    memset(out, 0xa5, sizeof out);
    j = gcm_job(v, v->pt, out, tag, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_ENCRYPT, &j, 1), COMB_OK);
    CHECK(j.out_len == v->len);
    if (memcmp(out, v->ct, v->len) != 0 || memcmp(tag, v->tag, 16) != 0) {
        fprintf(stderr, "encryption mismatch: %s\n", kats[i].id);
        test_failures++;
    }
    CHECK(v->len == 64 || out[v->len] == 0xa5);

    memcpy(tag, v->tag, 16);
    j = gcm_job(v, v->ct, out, tag, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_DECRYPT, &j, 1), COMB_OK);
    CHECK(j.out_len == v->len);
    if (memcmp(out, v->pt, v->len) != 0) {
        fprintf(stderr, "decryption mismatch: %s\n", kats[i].id);
        test_failures++;
    }
    /* Truncated tags are prefixes of the full tag, and verify. */
    for (tl = 4; tl <= 16; tl++) {
        uint8_t t[16];
        if (comb_tag_len_allowed(COMB_ALG_AES_GCM, tl) != 1)
            continue;
        j = gcm_job(v, v->pt, out, t, tl);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_ENCRYPT, &j, 1), COMB_OK);
        CHECK(memcmp(t, v->tag, tl) == 0);
        j = gcm_job(v, v->ct, out, t, tl);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_DECRYPT, &j, 1), COMB_OK);
    }
    /* A flipped tag bit: rejected, output zeroed. */
    tag[7] ^= 0x10;
    memset(out, 0xa5, sizeof out);
    j = gcm_job(v, v->ct, out, tag, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_DECRYPT, &j, 1),
               COMB_ERR_JOBS_FAILED);
    CHECK_CODE(j.status, COMB_ERR_AUTH_FAILED);
    CHECK(j.out_len == 0);
    {
        size_t k;
        for (k = 0; k < v->len; k++)
            if (out[k] != 0) {
                fprintf(stderr, "%s: output not zeroed after a failed tag\n", kats[i].id);
                test_failures++;
                break;
            }
    }
}

static void batch(void)
{
    static uint8_t out[N_KATS][64], tags[N_KATS][16];
    comb_job jobs[N_KATS];
    size_t i;
    for (i = 0; i < N_KATS; i++)
        jobs[i] = gcm_job(&d[i], d[i].pt, out[i], tags[i], 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_ENCRYPT, jobs, N_KATS), COMB_OK);
    for (i = 0; i < N_KATS; i++) {
        CHECK_CODE(jobs[i].status, COMB_OK);
        CHECK(memcmp(out[i], d[i].ct, d[i].len) == 0);
        CHECK(memcmp(tags[i], d[i].tag, 16) == 0);
    }
    /* Decrypt all, every third with a wrong tag. */
    for (i = 0; i < N_KATS; i++) {
        memcpy(tags[i], d[i].tag, 16);
        if (i % 3 == 1)
            tags[i][0] ^= 1;
        jobs[i] = gcm_job(&d[i], d[i].ct, out[i], tags[i], 16);
    }
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_DECRYPT, jobs, N_KATS),
               COMB_ERR_JOBS_FAILED);
    for (i = 0; i < N_KATS; i++) {
        if (i % 3 == 1) {
            CHECK_CODE(jobs[i].status, COMB_ERR_AUTH_FAILED);
        } else {
            CHECK_CODE(jobs[i].status, COMB_OK);
            CHECK(memcmp(out[i], d[i].pt, d[i].len) == 0);
        }
    }
}

static void in_place(void)
{
    const struct decoded *v = &d[3]; /* test case 4: AD and a partial last block */
    uint8_t buf[64], tag[16];
    comb_job j;
    memcpy(buf, v->pt, v->len);
    j = gcm_job(v, buf, buf, tag, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_ENCRYPT, &j, 1), COMB_OK);
    CHECK(memcmp(buf, v->ct, v->len) == 0 && memcmp(tag, v->tag, 16) == 0);
    j = gcm_job(v, buf, buf, tag, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_DECRYPT, &j, 1), COMB_OK);
    CHECK(memcmp(buf, v->pt, v->len) == 0);
}

static void errors(void)
{
    const struct decoded *v = &d[3];
    static uint8_t outs[6][64], tags[6][16], buf[160];
    comb_job jobs[6];
    /* Nonces are at least 1 byte. */
    jobs[0] = gcm_job(v, v->pt, outs[0], tags[0], 16);
    jobs[0].iv_len = 0;
    /* 10-byte tags are not allowed. */
    jobs[1] = gcm_job(v, v->pt, outs[1], tags[1], 10);
    /* No tag. */
    jobs[2] = gcm_job(v, v->pt, outs[2], NULL, 0);
    /* The output covers the AD. */
    memcpy(buf, v->ad, v->ad_len);
    jobs[3] = gcm_job(v, v->pt, buf, tags[3], 16);
    jobs[3].ad = buf + 8;
    /* The generated tag would land in the input. */
    memcpy(buf + 64, v->pt, v->len);
    jobs[4] = gcm_job(v, buf + 64, outs[4], buf + 64 + 16, 16);
    /* A good job, which still succeeds. */
    jobs[5] = gcm_job(v, v->pt, outs[5], tags[5], 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_ENCRYPT, jobs, 6),
               COMB_ERR_JOBS_FAILED);
    CHECK_CODE(jobs[0].status, COMB_ERR_INVALID_NONCE_LENGTH);
    CHECK_CODE(jobs[1].status, COMB_ERR_TAG_LENGTH_NOT_ALLOWED);
    CHECK_CODE(jobs[2].status, COMB_ERR_TAG_MISUSE);
    CHECK_CODE(jobs[3].status, COMB_ERR_OVERLAP);
    CHECK_CODE(jobs[4].status, COMB_ERR_OVERLAP);
    CHECK_CODE(jobs[5].status, COMB_OK);
    CHECK(memcmp(outs[5], v->ct, v->len) == 0 && memcmp(tags[5], v->tag, 16) == 0);
    /* Decryption with ciphertext and tag in one buffer, as on the wire. */
    memcpy(buf + 64, v->ct, v->len);
    memcpy(buf + 64 + 60, v->tag, 16);
    jobs[0] = gcm_job(v, buf + 64, outs[0], buf + 64 + 60, 16);
    CHECK_CODE(comb_process(engine, COMB_ALG_AES_GCM, COMB_OP_DECRYPT, jobs, 1), COMB_OK);
    CHECK(memcmp(outs[0], v->pt, v->len) == 0);
}

int main(void)
{
    size_t i;
    engine = engine_or_die();
    for (i = 0; i < N_KATS; i++) {
        d[i].key = key_from_hex(kats[i].key);
        d[i].iv_len = unhex(kats[i].iv, d[i].iv, sizeof d[i].iv);
        d[i].ad_len = unhex(kats[i].ad, d[i].ad, sizeof d[i].ad);
        d[i].len = unhex(kats[i].pt, d[i].pt, sizeof d[i].pt);
        CHECK(unhex(kats[i].ct, d[i].ct, sizeof d[i].ct) == d[i].len);
        CHECK(unhex(kats[i].tag, d[i].tag, sizeof d[i].tag) == 16);
    }
    for (i = 0; i < N_KATS; i++)
        single(i);
    batch();
    in_place();
    errors();
    for (i = 0; i < N_KATS; i++)
        comb_key_free(d[i].key);
    comb_engine_free(engine);
    printf("aead: %lu AES-GCM vectors\n", (unsigned long)N_KATS);
    return test_finish("aead");
}

/* Known-answer tests through the C API: NIST SP 800-38A (ECB, CBC, CFB128, OFB, CTR; AES-128,
 * -192, -256), RFC 4493 and SP 800-38B (CMAC), one job per call and all vectors of an
 * algorithm as one batch, both directions; stream-mode prefixes of every length; CBC-PKCS7
 * against CBC on the explicitly padded message. Vectors copied from testdata/kat/ciphers/aes. */
#include "test_util.h"

struct kat {
    uint32_t alg;
    const char *id;
    const char *key, *iv, *pt, *ct; /* CMAC: pt = message, ct = tag */
};

static const struct kat kats[] = {
    /* sp800_38a_ecb.kat */
    {COMB_ALG_AES_ECB, "SP 800-38A F.1.1 ECB-AES128.Encrypt",
     "2b7e151628aed2a6abf7158809cf4f3c",
     "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf"
     "43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4"},
    {COMB_ALG_AES_ECB, "SP 800-38A F.1.3 ECB-AES192.Encrypt",
     "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "bd334f1d6e45f25ff712a214571fa5cc974104846d0ad3ad7734ecb3ecee4eef"
     "ef7afd2270e2e60adce0ba2face6444e9a4b41ba738d6c72fb16691603c18e0e"},
    {COMB_ALG_AES_ECB, "SP 800-38A F.1.5 ECB-AES256.Encrypt",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870"
     "b6ed21b99ca6f4f9f153e7b1beafed1d23304b7a39f9f3ff067d8d8f9e24ecc7"},
    /* sp800_38a_cbc.kat */
    {COMB_ALG_AES_CBC, "SP 800-38A F.2.1 CBC-AES128.Encrypt",
     "2b7e151628aed2a6abf7158809cf4f3c",
     "000102030405060708090a0b0c0d0e0f",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
     "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7"},
    {COMB_ALG_AES_CBC, "SP 800-38A F.2.3 CBC-AES192.Encrypt",
     "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "000102030405060708090a0b0c0d0e0f",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "4f021db243bc633d7178183a9fa071e8b4d9ada9ad7dedf4e5e738763f69145a"
     "571b242012fb7ae07fa9baac3df102e008b0e27988598881d920a9e64f5615cd"},
    {COMB_ALG_AES_CBC, "SP 800-38A F.2.5 CBC-AES256.Encrypt",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "000102030405060708090a0b0c0d0e0f",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
     "39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b"},
    /* sp800_38a_cfb128.kat */
    {COMB_ALG_AES_CFB128, "SP 800-38A F.3.13 CFB128-AES128.Encrypt",
     "2b7e151628aed2a6abf7158809cf4f3c",
     "000102030405060708090a0b0c0d0e0f",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b"
     "26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6"},
    {COMB_ALG_AES_CFB128, "SP 800-38A F.3.15 CFB128-AES192.Encrypt",
     "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "000102030405060708090a0b0c0d0e0f",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "cdc80d6fddf18cab34c25909c99a417467ce7f7f81173621961a2b70171d3d7a"
     "2e1e8a1dd59b88b1c8e60fed1efac4c9c05f9f9ca9834fa042ae8fba584b09ff"},
    {COMB_ALG_AES_CFB128, "SP 800-38A F.3.17 CFB128-AES256.Encrypt",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "000102030405060708090a0b0c0d0e0f",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "dc7e84bfda79164b7ecd8486985d386039ffed143b28b1c832113c6331e5407b"
     "df10132415e54b92a13ed0a8267ae2f975a385741ab9cef82031623d55b1e471"},
    /* sp800_38a_ofb.kat */
    {COMB_ALG_AES_OFB, "SP 800-38A F.4.1 OFB-AES128.Encrypt",
     "2b7e151628aed2a6abf7158809cf4f3c",
     "000102030405060708090a0b0c0d0e0f",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "3b3fd92eb72dad20333449f8e83cfb4a7789508d16918f03f53c52dac54ed825"
     "9740051e9c5fecf64344f7a82260edcc304c6528f659c77866a510d9c1d6ae5e"},
    {COMB_ALG_AES_OFB, "SP 800-38A F.4.3 OFB-AES192.Encrypt",
     "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "000102030405060708090a0b0c0d0e0f",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "cdc80d6fddf18cab34c25909c99a4174fcc28b8d4c63837c09e81700c1100401"
     "8d9a9aeac0f6596f559c6d4daf59a5f26d9f200857ca6c3e9cac524bd9acc92a"},
    {COMB_ALG_AES_OFB, "SP 800-38A F.4.5 OFB-AES256.Encrypt",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "000102030405060708090a0b0c0d0e0f",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "dc7e84bfda79164b7ecd8486985d38604febdc6740d20b3ac88f6ad82a4fb08d"
     "71ab47a086e86eedf39d1c5bba97c4080126141d67f37be8538f5a8be740e484"},
    /* sp800_38a_ctr.kat */
    {COMB_ALG_AES_CTR, "SP 800-38A F.5.1 CTR-AES128.Encrypt",
     "2b7e151628aed2a6abf7158809cf4f3c",
     "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
     "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee"},
    {COMB_ALG_AES_CTR, "SP 800-38A F.5.3 CTR-AES192.Encrypt",
     "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e94"
     "1e36b26bd1ebc670d1bd1d665620abf74f78a7f6d29809585a97daec58c6b050"},
    {COMB_ALG_AES_CTR, "SP 800-38A F.5.5 CTR-AES256.Encrypt",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
     "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6"},
    /* rfc4493_cmac.kat */
    {COMB_ALG_AES_CMAC, "RFC 4493 section 4 Example 1: len = 0",
     "2b7e151628aed2a6abf7158809cf4f3c",
     "",
     "",
     "bb1d6929e95937287fa37d129b756746"},
    {COMB_ALG_AES_CMAC, "RFC 4493 section 4 Example 2: len = 16",
     "2b7e151628aed2a6abf7158809cf4f3c",
     "",
     "6bc1bee22e409f96e93d7e117393172a",
     "070a16b46b4d4144f79bdd9dd04a287c"},
    {COMB_ALG_AES_CMAC, "RFC 4493 section 4 Example 3: len = 40",
     "2b7e151628aed2a6abf7158809cf4f3c",
     "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411",
     "dfa66747de9ae63030ca32611497c827"},
    {COMB_ALG_AES_CMAC, "RFC 4493 section 4 Example 4: len = 64",
     "2b7e151628aed2a6abf7158809cf4f3c",
     "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "51f0bebf7e3b9d92fc49741779363cfe"},
    /* sp800_38b_cmac.kat */
    {COMB_ALG_AES_CMAC, "SP 800-38B Appendix D.2 AES-192 Example 1: Mlen = 0",
     "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "",
     "",
     "d17ddf46adaacde531cac483de7a9367"},
    {COMB_ALG_AES_CMAC, "SP 800-38B Appendix D.2 AES-192 Example 2: Mlen = 128",
     "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "",
     "6bc1bee22e409f96e93d7e117393172a",
     "9e99a7bf31e710900662f65e617c5184"},
    {COMB_ALG_AES_CMAC, "SP 800-38B Appendix D.2 AES-192 Example 3: Mlen = 320",
     "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411",
     "8a1de5be2eb31aad089a82e6ee908b0e"},
    {COMB_ALG_AES_CMAC, "SP 800-38B Appendix D.2 AES-192 Example 4: Mlen = 512",
     "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
     "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "a1d5df0eed790f794d77589659f39a11"},
    {COMB_ALG_AES_CMAC, "SP 800-38B Appendix D.3 AES-256 Example 1: Mlen = 0",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "",
     "",
     "028962f61b7bf89efc6b551f4667d983"},
    {COMB_ALG_AES_CMAC, "SP 800-38B Appendix D.3 AES-256 Example 2: Mlen = 128",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "",
     "6bc1bee22e409f96e93d7e117393172a",
     "28a7023f452e8f82bd4bf28d8c37c35c"},
    {COMB_ALG_AES_CMAC, "SP 800-38B Appendix D.3 AES-256 Example 3: Mlen = 320",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411",
     "aaf3d8f1de5640c232f5b169b9c911e6"},
    {COMB_ALG_AES_CMAC, "SP 800-38B Appendix D.3 AES-256 Example 4: Mlen = 512",
     "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
     "",
     "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
     "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
     "e1992190549f6ed5696a2c056c315410"},
};
#define N_KATS (sizeof kats / sizeof kats[0])

struct decoded {
    comb_key *key;
    uint8_t iv[16], pt[64], ct[64];
    size_t iv_len, pt_len, ct_len;
};

static void decode(const struct kat *k, struct decoded *d)
{
    d->key = key_from_hex(k->key);
    d->iv_len = unhex(k->iv, d->iv, sizeof d->iv);
    d->pt_len = unhex(k->pt, d->pt, sizeof d->pt);
    d->ct_len = unhex(k->ct, d->ct, sizeof d->ct);
}

static int mode_is_stream(uint32_t alg)
{
    return alg == COMB_ALG_AES_CTR || alg == COMB_ALG_AES_CFB128 || alg == COMB_ALG_AES_OFB;
}

/* One job per call, both directions. */
static void single(const comb_engine *engine, const struct kat *k, const struct decoded *d)
{
    uint8_t out[64];
    comb_job j;
    if (k->alg == COMB_ALG_AES_CMAC) {
        uint8_t tag[16];
        size_t tl;
        for (tl = 1; tl <= 16; tl += 7) { /* 1, 8, 15 and the full tag below */
            j = make_job(d->key, d->pt, d->pt_len, NULL, 0, NULL, 0);
            j.tag = tag;
            j.tag_len = tl;
            CHECK_CODE(comb_process(engine, k->alg, COMB_OP_MAC_GENERATE, &j, 1), COMB_OK);
            CHECK(memcmp(tag, d->ct, tl) == 0);
        }
        j = make_job(d->key, d->pt, d->pt_len, NULL, 0, NULL, 0);
        j.tag = tag;
        j.tag_len = 16;
        CHECK_CODE(comb_process(engine, k->alg, COMB_OP_MAC_GENERATE, &j, 1), COMB_OK);
        CHECK(j.out_len == 0);
        if (memcmp(tag, d->ct, 16) != 0) {
            fprintf(stderr, "tag mismatch: %s\n", k->id);
            test_failures++;
        }
        memcpy(tag, d->ct, 16);
        CHECK_CODE(comb_process(engine, k->alg, COMB_OP_MAC_VERIFY, &j, 1), COMB_OK);
        tag[15] ^= 1;
        CHECK_CODE(comb_process(engine, k->alg, COMB_OP_MAC_VERIFY, &j, 1),
                   COMB_ERR_JOBS_FAILED);
        CHECK_CODE(j.status, COMB_ERR_AUTH_FAILED);
        return;
    }
    memset(out, 0, sizeof out);
    j = make_job(d->key, d->pt, d->pt_len, out, sizeof out, d->iv, d->iv_len);
    CHECK_CODE(comb_process(engine, k->alg, COMB_OP_ENCRYPT, &j, 1), COMB_OK);
    CHECK(j.out_len == d->ct_len);
    if (memcmp(out, d->ct, d->ct_len) != 0) {
        fprintf(stderr, "ciphertext mismatch: %s\n", k->id);
        test_failures++;
    }
    memset(out, 0, sizeof out);
    j = make_job(d->key, d->ct, d->ct_len, out, sizeof out, d->iv, d->iv_len);
    CHECK_CODE(comb_process(engine, k->alg, COMB_OP_DECRYPT, &j, 1), COMB_OK);
    if (memcmp(out, d->pt, d->pt_len) != 0) {
        fprintf(stderr, "plaintext mismatch: %s\n", k->id);
        test_failures++;
    }
}

/* All vectors of one algorithm in one call, plus (stream modes) every prefix length. */
static void batch(const comb_engine *engine, uint32_t alg, struct decoded *d)
{
    comb_job jobs[N_KATS * 65];
    static uint8_t outs[N_KATS * 65][64];
    static uint8_t tags[N_KATS][16];
    size_t which[N_KATS * 65], lens[N_KATS * 65];
    size_t n = 0, i, len;
    uint32_t ops[2] = {COMB_OP_ENCRYPT, COMB_OP_DECRYPT};
    int o;

    for (o = 0; o < 2; o++) {
        uint32_t op = ops[o];
        n = 0;
        for (i = 0; i < N_KATS; i++) {
            if (kats[i].alg != alg)
                continue;
            if (alg == COMB_ALG_AES_CMAC) {
                jobs[n] = make_job(d[i].key, d[i].pt, d[i].pt_len, NULL, 0, NULL, 0);
                if (op == COMB_OP_DECRYPT)
                    memcpy(tags[i], d[i].ct, 16);
                jobs[n].tag = tags[i];
                jobs[n].tag_len = 16;
                which[n] = i;
                lens[n] = 16;
                n++;
                continue;
            }
            for (len = mode_is_stream(alg) ? 0 : d[i].pt_len; len <= d[i].pt_len; len++) {
                const uint8_t *src = op == COMB_OP_ENCRYPT ? d[i].pt : d[i].ct;
                memset(outs[n], 0xa5, 64);
                jobs[n] = make_job(d[i].key, src, len, outs[n], 64, d[i].iv, d[i].iv_len);
                which[n] = i;
                lens[n] = len;
                n++;
            }
        }
        CHECK_CODE(comb_process(engine, alg, op, jobs, n), COMB_OK);
        for (i = 0; i < n; i++) {
            const struct decoded *v = &d[which[i]];
            CHECK_CODE(jobs[i].status, COMB_OK);
            if (alg == COMB_ALG_AES_CMAC) {
                if (op == COMB_OP_ENCRYPT)
                    CHECK(memcmp(tags[which[i]], v->ct, 16) == 0);
                continue;
            }
            CHECK(jobs[i].out_len == lens[i]);
            if (memcmp(outs[i], op == COMB_OP_ENCRYPT ? v->ct : v->pt, lens[i]) != 0) {
                fprintf(stderr, "batch mismatch: %s, op %u, len %lu\n", kats[which[i]].id,
                        (unsigned)op, (unsigned long)lens[i]);
                test_failures++;
            }
            /* Nothing written beyond the output. */
            CHECK(lens[i] == 64 || outs[i][lens[i]] == 0xa5);
        }
    }
}

/* CBC-PKCS7 = CBC over the message with its padding appended; every length 0..64. */
static void pkcs7(const comb_engine *engine, const struct decoded *cbc)
{
    size_t len;
    for (len = 0; len <= 64; len++) {
        uint8_t padded[80], want[80], got[80], back[80];
        size_t plen = (len / 16 + 1) * 16;
        comb_job j;
        memcpy(padded, cbc->pt, len);
        memset(padded + len, (int)(plen - len), plen - len);
        j = make_job(cbc->key, padded, plen, want, sizeof want, cbc->iv, 16);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, &j, 1), COMB_OK);
        j = make_job(cbc->key, cbc->pt, len, got, sizeof got, cbc->iv, 16);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC_PKCS7, COMB_OP_ENCRYPT, &j, 1),
                   COMB_OK);
        CHECK(j.out_len == plen);
        CHECK(memcmp(got, want, plen) == 0);
        /* Too small an output: exactly one byte short. */
        j = make_job(cbc->key, cbc->pt, len, got, plen - 1, cbc->iv, 16);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC_PKCS7, COMB_OP_ENCRYPT, &j, 1),
                   COMB_ERR_JOBS_FAILED);
        CHECK_CODE(j.status, COMB_ERR_OUTPUT_TOO_SHORT);
        /* Decryption returns the plaintext length. */
        j = make_job(cbc->key, want, plen, back, sizeof back, cbc->iv, 16);
        CHECK_CODE(comb_process(engine, COMB_ALG_AES_CBC_PKCS7, COMB_OP_DECRYPT, &j, 1),
                   COMB_OK);
        CHECK(j.out_len == len);
        CHECK(memcmp(back, cbc->pt, len) == 0);
    }
}

int main(void)
{
    comb_engine *engine = engine_or_die();
    static struct decoded d[N_KATS];
    static const uint32_t algs[] = {COMB_ALG_AES_ECB,    COMB_ALG_AES_CBC, COMB_ALG_AES_CTR,
                                    COMB_ALG_AES_CFB128, COMB_ALG_AES_OFB, COMB_ALG_AES_CMAC};
    size_t i, cbc128 = N_KATS;
    for (i = 0; i < N_KATS; i++) {
        decode(&kats[i], &d[i]);
        single(engine, &kats[i], &d[i]);
        if (kats[i].alg == COMB_ALG_AES_CBC && cbc128 == N_KATS)
            cbc128 = i;
    }
    for (i = 0; i < sizeof algs / sizeof algs[0]; i++)
        batch(engine, algs[i], d);
    CHECK(cbc128 < N_KATS);
    if (cbc128 < N_KATS)
        pkcs7(engine, &d[cbc128]);
    for (i = 0; i < N_KATS; i++)
        comb_key_free(d[i].key);
    comb_engine_free(engine);
    printf("kat: %lu vectors\n", (unsigned long)N_KATS);
    return test_finish("kat");
}

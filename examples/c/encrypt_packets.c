/*
 * encrypt_packets: encrypt a batch of packets with comb through its C API.
 *
 * Build and run (from the repository root):
 *     cargo build --release -p comb-ffi
 *     make -C examples/c
 *     examples/c/encrypt_packets
 *
 * Two "tunnels" (an AES-128 and an AES-256 key) carry a mix of short and full-size packets.
 * All packets are encrypted with AES-CTR in place in one comb_process call, then, as an ESP
 * gateway would, padded to whole blocks and encrypted with AES-CBC out of place in a second
 * call. Each call returns one status per packet, in packet order; the program decrypts
 * everything again and checks the round trip.
 */
#include "comb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PACKETS 16
#define MAX_PACKET 1504 /* 1500 bytes rounded up to whole 16-byte blocks */

struct packet {
    size_t len;
    uint8_t data[MAX_PACKET];    /* CTR: encrypted in place */
    uint8_t cbc_out[MAX_PACKET]; /* CBC: ciphertext */
    uint8_t iv[16];              /* per-packet IV / initial counter block */
    unsigned tunnel;
};

static int check(int rc, const char *what)
{
    if (rc != COMB_OK && rc != COMB_ERR_JOBS_FAILED) {
        fprintf(stderr, "%s: %s\n", what, comb_strerror(rc));
        exit(1);
    }
    return rc;
}

int main(void)
{
    static const size_t sizes[PACKETS] = {40,   1500, 64,  1400, 52,  576, 1500, 80,
                                          1420, 44,   100, 1480, 60,  512, 1500, 1};
    static const uint8_t key_bytes[2][32] = {
        {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
         0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c},
        {0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae,
         0xf0, 0x85, 0x7d, 0x77, 0x81, 0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61,
         0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3, 0x09, 0x14, 0xdf, 0xf4}};
    static const size_t key_len[2] = {16, 32};
    static struct packet pkts[PACKETS];
    static uint8_t original[PACKETS][MAX_PACKET];
    comb_engine *engine = NULL;
    comb_key *keys[2] = {NULL, NULL};
    comb_job jobs[PACKETS];
    size_t i, j;
    unsigned failed = 0;

    printf("comb %s (ABI %u), ", comb_version(), (unsigned)comb_abi_version());
    check(comb_engine_new(&engine), "comb_engine_new");
    printf("backend %s\n", comb_engine_backend(engine));
    for (i = 0; i < 2; i++)
        check(comb_key_new(key_bytes[i], key_len[i], &keys[i]), "comb_key_new");

    for (i = 0; i < PACKETS; i++) {
        struct packet *p = &pkts[i];
        p->len = sizes[i];
        p->tunnel = (unsigned)(i % 3 == 0);
        for (j = 0; j < p->len; j++)
            p->data[j] = (uint8_t)(i * 31 + j);
        for (j = 0; j < 16; j++)
            p->iv[j] = (uint8_t)(i ^ (j * 17)); /* unique per packet and key */
        memcpy(original[i], p->data, p->len);
    }

    /* 1. AES-CTR, in place (in == out), all packets in one call. */
    for (i = 0; i < PACKETS; i++) {
        comb_job_init(&jobs[i]);
        jobs[i].key = keys[pkts[i].tunnel];
        jobs[i].in = pkts[i].data;
        jobs[i].out = pkts[i].data;
        jobs[i].len = pkts[i].len;
        jobs[i].out_cap = pkts[i].len;
        jobs[i].iv = pkts[i].iv;
        jobs[i].iv_len = sizeof pkts[i].iv;
        jobs[i].user_data = &pkts[i];
    }
    check(comb_process(engine, COMB_ALG_AES_CTR, COMB_OP_ENCRYPT, jobs, PACKETS), "CTR");
    printf("AES-CTR, %d packets in one call:\n", PACKETS);
    for (i = 0; i < PACKETS; i++) {
        const struct packet *p = (const struct packet *)jobs[i].user_data;
        printf("  packet %2lu  %4lu bytes  key %u  %-8s  %02x%02x%02x%02x...\n",
               (unsigned long)i, (unsigned long)p->len, p->tunnel * 128 + 128,
               jobs[i].status == COMB_OK ? "ok" : comb_strerror(jobs[i].status),
               p->data[0], p->len > 1 ? p->data[1] : 0, p->len > 2 ? p->data[2] : 0,
               p->len > 3 ? p->data[3] : 0);
        failed += jobs[i].status != COMB_OK;
    }

    /* 2. AES-CBC, out of place, on the CTR output padded to whole blocks (ESP-style:
     *    the caller pads; aes-cbc-pkcs7 would pad for us). */
    for (i = 0; i < PACKETS; i++) {
        struct packet *p = &pkts[i];
        size_t padded = (p->len + 15) / 16 * 16;
        memset(p->data + p->len, (int)(padded - p->len), padded - p->len);
        comb_job_init(&jobs[i]);
        jobs[i].key = keys[p->tunnel];
        jobs[i].in = p->data;
        jobs[i].len = padded;
        jobs[i].out = p->cbc_out;
        jobs[i].out_cap = sizeof p->cbc_out;
        jobs[i].iv = p->iv;
        jobs[i].iv_len = sizeof p->iv;
    }
    check(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_ENCRYPT, jobs, PACKETS), "CBC");
    printf("AES-CBC, %d packets in one call:\n", PACKETS);
    for (i = 0; i < PACKETS; i++) {
        printf("  packet %2lu  %4lu -> %4lu bytes  %s\n", (unsigned long)i,
               (unsigned long)pkts[i].len, (unsigned long)jobs[i].out_len,
               jobs[i].status == COMB_OK ? "ok" : comb_strerror(jobs[i].status));
        failed += jobs[i].status != COMB_OK;
    }

    /* 3. Round trip: CBC decrypt in place into cbc_out, then CTR decrypt in place. */
    for (i = 0; i < PACKETS; i++) {
        jobs[i].in = pkts[i].cbc_out;
        jobs[i].out = pkts[i].cbc_out;
        jobs[i].out_cap = jobs[i].len;
    }
    check(comb_process(engine, COMB_ALG_AES_CBC, COMB_OP_DECRYPT, jobs, PACKETS), "CBC^-1");
    for (i = 0; i < PACKETS; i++) {
        failed += jobs[i].status != COMB_OK;
        jobs[i].len = pkts[i].len;
        jobs[i].out_cap = pkts[i].len;
    }
    check(comb_process(engine, COMB_ALG_AES_CTR, COMB_OP_DECRYPT, jobs, PACKETS), "CTR^-1");
    for (i = 0; i < PACKETS; i++) {
        int same = jobs[i].status == COMB_OK &&
                   memcmp(pkts[i].cbc_out, original[i], pkts[i].len) == 0;
        failed += !same;
    }
    printf("round trip: %d packets, %u failed\n", PACKETS, failed);

    comb_key_free(keys[0]);
    comb_key_free(keys[1]);
    comb_engine_free(engine);
    return failed == 0 ? 0 : 1;
}

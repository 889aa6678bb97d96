/*
 * comb.h - C interface of comb: batched AES modes of operation (comb scheduler).
 *
 * Library: libcomb_ffi.a (static; link also -lpthread -ldl -lm) or libcomb_ffi.so, built by
 * `cargo build --release -p comb-ffi` into target/release/. C99; usable from C++.
 *
 * This header is written by hand. `cargo test -p comb-ffi` fails when it drifts from the
 * library: every COMB_* constant, every function prototype and the comb_job field list are
 * checked against the Rust code, and a C test compares sizeof/offsetof(comb_job) with the
 * library's comb_job_layout().
 *
 * Model
 * -----
 * - comb_key: an expanded AES-128/192/256 key. Created by comb_key_new, immutable afterwards,
 *   overwritten with zeros and freed by comb_key_free. Any number of jobs, batches and threads
 *   may use one key at the same time.
 * - comb_engine: the backend (AES-NI, VAES) and lane counts, chosen once by comb_engine_new
 *   (which reads the COMB_BACKEND environment variable and the `comb tune` file). Immutable;
 *   share one engine between all threads.
 * - comb_job: one message. comb_process runs an array of jobs of one algorithm and direction
 *   and writes each job's status and out_len, in input order; a bad job never affects the
 *   others.
 *
 * Thread safety
 * -------------
 * The library has no global mutable state. Keys and engines are read-only after creation:
 * concurrent comb_process calls on different job arrays may share them freely. A job array
 * (and the buffers its jobs point at) must not be touched by anyone else during the
 * comb_process call that uses it. Freeing a key or engine while another thread uses it is
 * undefined behaviour, as for any handle. comb_engine_new reads the environment
 * (COMB_BACKEND, and COMB_TUNING / XDG_CONFIG_HOME / HOME to find the tuning file): do not
 * call setenv/putenv concurrently with it.
 *
 * Ownership and lifetime
 * ----------------------
 * Handles are owned by the caller from *_new until *_free (both *_free accept NULL). The
 * library keeps no pointer to a job, buffer or key after comb_process returns. Strings
 * returned by comb_strerror, comb_version, comb_alg_name and comb_engine_backend are static:
 * never free them.
 *
 * Errors
 * ------
 * Functions return COMB_OK (0) or a negative COMB_ERR_* code; comb_strerror names each.
 * No Rust panic ever crosses this interface: one would be reported as COMB_ERR_PANIC.
 */
#ifndef COMB_H
#define COMB_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Versions ------------------------------------------------------------------------ */

/* The ABI version of this header; compare with comb_abi_version() of the linked library. */
#define COMB_ABI_VERSION 1

/* sizeof(comb_job) of version 1: 120 bytes on LP64, 68 on ILP32. comb_process rejects a job
 * whose size field is smaller; later versions only append fields. */
#define COMB_JOB_SIZE_V1 (16 + 13 * sizeof(void *))

/* The largest size field comb_process accepts. */
#define COMB_JOB_SIZE_MAX 4096

/* ---- Algorithms (stable numbers, never reused; 0 is never an algorithm) -------------- */

/* String IDs as in comb's CLI and test files; keys 16/24/32 bytes for the aes-* IDs, 16 for
 * the aes128-* IDs except McOE-G (32). */
#define COMB_ALG_AES_ECB 1       /* "aes-ecb": SP 800-38A, whole blocks, no IV */
#define COMB_ALG_AES_CBC 2       /* "aes-cbc": SP 800-38A, whole blocks, 16-byte IV */
#define COMB_ALG_AES_CBC_PKCS7 3 /* "aes-cbc-pkcs7": any length; out grows to the next block */
#define COMB_ALG_AES_CTR 4       /* "aes-ctr": 16-byte counter block, 128-bit BE counter */
#define COMB_ALG_AES_CFB128 5    /* "aes-cfb128": 16-byte IV, any length */
#define COMB_ALG_AES_OFB 6       /* "aes-ofb": 16-byte IV, any length */
#define COMB_ALG_AES_CMAC 7      /* "aes-cmac": SP 800-38B / RFC 4493, tags 1..16 bytes */
#define COMB_ALG_AES_GCM 8       /* "aes-gcm": SP 800-38D AEAD: nonce >= 1 byte (12 is the
                                  * fast path), AD, detached tag of 4, 8, 12..16 bytes */
#define COMB_ALG_AES_CCM 9 /* "aes-ccm": SP 800-38C / RFC 3610 CCM (AEAD): nonce 7..=13 bytes, tags 4, 6, .., 16 bytes */
#define COMB_ALG_AES_OCB3 10 /* "aes-ocb3": RFC 7253 OCB (AEAD): nonce 1..=15 bytes, tags 8..=16 bytes */
#define COMB_ALG_AES128_OTR 11 /* "aes128-otr": AES-OTR v3, parallel AD: 16-byte key, 12-byte nonce, 16-byte tag */
#define COMB_ALG_AES128_CLOC 12 /* "aes128-cloc": AES-CLOC: 16-byte key, 12-byte nonce, 8-byte tag */
#define COMB_ALG_AES128_SILC 13 /* "aes128-silc": AES-SILC v3: 16-byte key, 12-byte nonce, 8-byte tag */
#define COMB_ALG_AES128_JAMBU 14 /* "aes128-jambu": AES-JAMBU v2: 16-byte key, 8-byte nonce, 8-byte tag */
#define COMB_ALG_AES128_MCOE_G 15 /* "aes128-mcoe-g": McOE-G: 32-byte key K1 || K2, 16-byte nonce and tag */
#define COMB_ALG_AES128_COPA 16 /* "aes128-copa": AES-COPA v2: 16-byte key, nonce and tag; ciphertext 16*max(1,ceil(len/16)) + 1 bytes */
#define COMB_ALG_AES128_POET 17 /* "aes128-poet": POET v2, full AES-128 hash: 16-byte key, nonce and tag */
#define COMB_ALG_AES128_POET_GF 18 /* "aes128-poet-gf": POET v1, GF(2^128) hash: 16-byte key, nonce and tag */
#define COMB_ALG_AES128_JULIUS 19 /* "aes128-julius": Julius-ECB: 16-byte key and nonce, no tag (tag_len 0); ciphertext 16*ceil(len/16) + 16 bytes */
#define COMB_ALG_AES128_COBRA_R 20 /* "aes128-cobra-r": COBRA-R (a documented reconstruction of COBRA): 16-byte key, nonce and tag; even block counts */

/* ---- Operations ---------------------------------------------------------------------- */

#define COMB_OP_ENCRYPT 1      /* encrypt; MACs and AEAD modes: generate the tag */
#define COMB_OP_DECRYPT 2      /* decrypt; MACs and AEAD modes: verify the tag */
#define COMB_OP_MAC_GENERATE 1 /* = COMB_OP_ENCRYPT */
#define COMB_OP_MAC_VERIFY 2   /* = COMB_OP_DECRYPT */

/* ---- Error codes --------------------------------------------------------------------- */

#define COMB_OK 0
/* Errors of the library (one per kind). */
#define COMB_ERR_UNSUPPORTED (-1)         /* CPU lacks AES-NI / the forced backend */
#define COMB_ERR_UNKNOWN_BACKEND (-2)     /* COMB_BACKEND names no backend */
#define COMB_ERR_UNKNOWN_ALGORITHM (-3)   /* algorithm ID or name not in this build */
#define COMB_ERR_INVALID_KEY_LENGTH (-4)  /* key length not one the algorithm takes */
#define COMB_ERR_INVALID_IV_LENGTH (-5)   /* iv_len not what the algorithm takes */
#define COMB_ERR_NOT_BLOCK_MULTIPLE (-6)  /* ECB, CBC, CBC-PKCS7 decryption: len % 16 != 0 */
#define COMB_ERR_OUTPUT_TOO_SHORT (-7)    /* out_cap below comb_output_len() */
#define COMB_ERR_INVALID_PADDING (-8)     /* PKCS#7 padding bad; output zeroed */
#define COMB_ERR_INVALID_TAG_LENGTH (-9)  /* tag_len outside comb_tag_len_range() */
#define COMB_ERR_TAG_MISUSE (-10)         /* MAC job without tag, or tag for a plain mode */
#define COMB_ERR_AD_NOT_SUPPORTED (-11)   /* ad_len > 0 for a mode without AD */
#define COMB_ERR_AUTH_FAILED (-12)        /* tag did not verify; output zeroed */
#define COMB_ERR_INVALID_LANE_COUNT (-13) /* lane count outside 1..32 */
#define COMB_ERR_INVALID_NONCE_LENGTH (-14)   /* nonce length outside comb_iv_len_range() */
#define COMB_ERR_TAG_LENGTH_NOT_ALLOWED (-15) /* tag_len not allowed (comb_tag_len_allowed) */
#define COMB_ERR_MESSAGE_TOO_LONG (-16)       /* len or ad_len above the algorithm's limit */
#define COMB_ERR_INVALID_MESSAGE_LENGTH (-17) /* len not of the algorithm's shape (COBRA-R,
                                               * AES-COPA, Julius ciphertexts) */
/* Errors of the C interface. */
#define COMB_ERR_NULL_POINTER (-100)     /* required pointer NULL, or NULL with length > 0 */
#define COMB_ERR_OVERLAP (-101)          /* buffers overlap (only in == out is allowed) */
#define COMB_ERR_JOB_SIZE (-102)         /* bad comb_job.size */
#define COMB_ERR_UNKNOWN_OP (-103)       /* op not COMB_OP_ENCRYPT / COMB_OP_DECRYPT */
#define COMB_ERR_PANIC (-104)            /* internal error caught in the library */
#define COMB_ERR_JOBS_FAILED (-105)      /* comb_process: some job's status is not COMB_OK */
#define COMB_ERR_INVALID_ARGUMENT (-106) /* flags != 0, misaligned array, range wraps */
#define COMB_ERR_OTHER (-107)            /* library error without a code in this version */

/* ---- Handles ------------------------------------------------------------------------- */

typedef struct comb_key comb_key;       /* opaque: an expanded AES key */
typedef struct comb_engine comb_engine; /* opaque: backend and lane counts */

/* ---- The job, version 1 -------------------------------------------------------------- */

/*
 * One message of a batch. Initialise with comb_job_init() (or zero it and set size to
 * sizeof(comb_job)); every job of one array must have the same size, which comb_process
 * uses as the array stride.
 *
 * Any pointer whose length is 0 is ignored and may be NULL. A pointer with a non-zero length
 * must not be NULL (else status COMB_ERR_NULL_POINTER) and must be valid for that length.
 *
 * Buffers:
 *   plain modes: read in[0..len), write out[0..out_cap) (the mode writes
 *     comb_output_len(alg, op, len) bytes: len, or the padded length for PKCS#7 encryption).
 *     in == out means in place: the buffer holds the message in its first len bytes and
 *     out_cap >= len bytes in all. Any other overlap of [in, in+len) and [out, out+out_cap)
 *     is COMB_ERR_OVERLAP, as is any overlap of a written buffer (out, or tag when
 *     generating) with any other buffer of the same call (IV, AD, other jobs' buffers).
 *     Two jobs may read the same bytes (e.g. one IV array).
 *   MACs (COMB_ALG_AES_CMAC): the message is in[0..len); out and out_cap are ignored.
 *     COMB_OP_MAC_GENERATE writes tag[0..tag_len), COMB_OP_MAC_VERIFY compares with it in
 *     constant time (COMB_ERR_AUTH_FAILED on mismatch).
 *   AEAD (COMB_ALG_AES_GCM, _CCM, _OCB3 and the aes128-* IDs): as plain modes (ciphertext
 *     as long as the plaintext, except COPA and Julius: comb_output_len()) plus
 *     ad[0..ad_len) and a detached tag (none for Julius: tag_len 0): written on encrypt,
 *     checked on decrypt (on COMB_ERR_AUTH_FAILED the output is zeroed). out_len is the
 *     plaintext length on decryption.
 *   iv: the IV / initial counter block / nonce, iv_len bytes (comb_iv_len_range(); 0 for
 *     ECB and CMAC). ad: associated data (AEAD only; ad_len must be 0 for other modes).
 *     tag: written on encrypt/generate, read on decrypt/verify (tag_len 0: no tag).
 *
 * Outputs (written by comb_process for every job): status (COMB_OK or a COMB_ERR_* code)
 * and out_len (bytes written to out: the plaintext length for PKCS#7 decryption, 0 for
 * MACs and on error). user_data and reserved are never read or written by the library.
 */
typedef struct comb_job {
    uint32_t size;         /* in: sizeof(comb_job), >= COMB_JOB_SIZE_V1 */
    uint32_t flags;        /* in: reserved, must be 0 */
    const uint8_t *in;     /* in: input, len bytes */
    uint8_t *out;          /* in: output buffer, out_cap bytes (== in: in place) */
    size_t len;            /* in: input length */
    size_t out_cap;        /* in: output capacity */
    const comb_key *key;   /* in: key handle (required) */
    const uint8_t *iv;     /* in: IV / counter block / nonce, iv_len bytes */
    size_t iv_len;         /* in: IV length */
    const uint8_t *ad;     /* in: associated data (AEAD), ad_len bytes */
    size_t ad_len;         /* in: AD length */
    uint8_t *tag;          /* in: tag buffer, tag_len bytes (written or read, see above) */
    size_t tag_len;        /* in: tag length, 0 for none */
    int32_t status;        /* out: COMB_OK or COMB_ERR_* */
    uint32_t reserved;     /* ignored */
    size_t out_len;        /* out: bytes written to out */
    void *user_data;       /* the caller's */
} comb_job;

/* Zeroes *job and sets job->size = sizeof(comb_job). */
static inline void comb_job_init(comb_job *job)
{
    memset(job, 0, sizeof *job);
    job->size = (uint32_t)sizeof *job;
}

/* ---- Functions ----------------------------------------------------------------------- */

/* COMB_ABI_VERSION of the linked library. */
uint32_t comb_abi_version(void);

/* Library version, e.g. "0.1.0" (static string). */
const char *comb_version(void);

/* Static description of an error code ("unknown error code" for others). Never NULL. */
const char *comb_strerror(int code);

/* String ID of an algorithm ("aes-cbc"; static), or NULL for an unknown ID. */
const char *comb_alg_name(uint32_t alg);

/* Looks up a string ID. COMB_OK, COMB_ERR_NULL_POINTER or COMB_ERR_UNKNOWN_ALGORITHM. */
int comb_alg_from_name(const char *name, uint32_t *alg);

/* IV/nonce length the algorithm takes (0: none); the recommended one when the length may
 * vary (AES-GCM: 12). */
int comb_iv_len(uint32_t alg, size_t *iv_len);

/* IV/nonce lengths the algorithm accepts, inclusive (both 0: none; AES-GCM: 1..2^61-1). */
int comb_iv_len_range(uint32_t alg, size_t *min, size_t *max);

/* Shortest and longest tag (both 0 for algorithms without a tag); not every length between
 * need be allowed (AES-GCM: 4, 8, 12..16). */
int comb_tag_len_range(uint32_t alg, size_t *min, size_t *max);

/* 1 if a tag of len bytes is allowed, 0 if not, or COMB_ERR_UNKNOWN_ALGORITHM. */
int comb_tag_len_allowed(uint32_t alg, size_t len);

/* The out_cap a job with len input bytes needs (0 for MACs; len for PKCS#7 decryption).
 * COMB_ERR_INVALID_ARGUMENT if it would exceed PTRDIFF_MAX (no buffer can hold it). */
int comb_output_len(uint32_t alg, uint32_t op, size_t len, size_t *out_len);

/* Expands a 16-, 24- or 32-byte AES key into a new handle (*out = NULL on error).
 * COMB_OK, COMB_ERR_NULL_POINTER, COMB_ERR_INVALID_KEY_LENGTH, COMB_ERR_UNSUPPORTED. */
int comb_key_new(const uint8_t *key, size_t len, comb_key **out);

/* Overwrites the key material with zeros and frees the handle. NULL: no-op. */
void comb_key_free(comb_key *key);

/* An engine on the best backend of this CPU, or the one COMB_BACKEND names (*out = NULL on
 * error). COMB_OK, COMB_ERR_NULL_POINTER, COMB_ERR_UNSUPPORTED, COMB_ERR_UNKNOWN_BACKEND. */
int comb_engine_new(comb_engine **out);

/* Frees an engine. NULL: no-op. */
void comb_engine_free(comb_engine *engine);

/* The engine's backend name ("ni", "vaes256"; static), or NULL for a NULL engine. */
const char *comb_engine_backend(const comb_engine *engine);

/* The library's layout of comb_job: sizeof, alignof, then each field's offset in order.
 * Writes min(n, total) values to out and returns total (2 + number of fields). */
size_t comb_job_layout(size_t *out, size_t n);

/*
 * Runs n_jobs jobs of algorithm alg in direction op as one batch (jobs of any key, length,
 * in place or not). Writes status and out_len of every job, in input order.
 *
 * Returns COMB_OK when every job succeeded, COMB_ERR_JOBS_FAILED when the batch ran and at
 * least one job failed (see their status), or a call-level error: COMB_ERR_NULL_POINTER
 * (engine NULL, or jobs NULL with n_jobs > 0), COMB_ERR_UNKNOWN_ALGORITHM,
 * COMB_ERR_UNKNOWN_OP, COMB_ERR_JOB_SIZE (jobs[0].size below COMB_JOB_SIZE_V1, above
 * COMB_JOB_SIZE_MAX or not a multiple of the alignment), COMB_ERR_INVALID_ARGUMENT
 * (misaligned array), COMB_ERR_PANIC. After a call-level error no job has been processed,
 * and every job's status is that code when the array could be walked (valid jobs[0].size).
 * n_jobs == 0 returns COMB_OK (or the call-level error) without touching jobs.
 *
 * Per-job errors: COMB_ERR_JOB_SIZE (size differs from jobs[0].size),
 * COMB_ERR_INVALID_ARGUMENT (flags != 0, a range that wraps around), COMB_ERR_NULL_POINTER
 * (no key, NULL buffer with non-zero length), COMB_ERR_OUTPUT_TOO_SHORT (in place with
 * out_cap < len), COMB_ERR_OVERLAP, and the algorithm's own errors.
 */
int comb_process(const comb_engine *engine, uint32_t alg, uint32_t op, comb_job *jobs,
                 size_t n_jobs);

#ifdef __cplusplus
}
#endif

#endif /* COMB_H */

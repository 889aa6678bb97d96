#!/usr/bin/env python3
"""Writes the batch_api seeds (seeds/batch_api/*.bin): byte strings that `decode` in
fuzz_targets/batch_api.rs turns into well-formed batches (plus one with malformed jobs).

It mirrors the decoder: every choice is `Unstructured::int_in_range`, which for a range of
fewer than 256 values reads one byte and takes it modulo the range's size (two bytes, big
endian, for the 0..=4129 length). Check a seed with
`COMB_FUZZ_DEBUG=1 cargo +nightly fuzz run batch_api seeds/batch_api/NAME.bin`.
Re-run after changing the decoder: `python3 seeds/make_batch_api_seeds.py`.
"""
import os

ALGS = ["aes-ecb", "aes-cbc", "aes-cbc-pkcs7", "aes-ctr", "aes-cfb128", "aes-ofb", "aes-cmac", "aes-gcm"]
IV_LEN = {a: (0 if a in ("aes-ecb", "aes-cmac") else 12 if a == "aes-gcm" else 16) for a in ALGS}
TAGGED = ("aes-cmac", "aes-gcm")


def job(alg, length, key_len=16, mode="exact", tag="natural", iv="right", ad=0, raw=False, op="encrypt"):
    b = bytearray()
    b.append({16: 0, 24: 5, 32: 10}.get(key_len, 15))
    if key_len not in (16, 24, 32):
        b.append(key_len)
    b += bytes((i * 13 + 1) & 0xFF for i in range(key_len))
    if iv == "right":
        b.append(0)
        b += bytes(range(IV_LEN[alg]))
    else:  # a wrong length
        b += bytes([15, iv])
        b += bytes(range(iv))
    if ad:
        b += bytes([15, ad - 1]) + bytes(ad)
    else:
        b.append(0)
    if length % 16 == 0 and length // 16 <= 130:
        b += bytes([3, length // 16])
    elif length <= 48:
        b += bytes([0, length])
    else:
        b += bytes([5]) + length.to_bytes(2, "big")
    if raw:
        b.append(0)
        b += bytes((i * 7) & 0xFF for i in range(length))
    else:
        b += bytes([1, length & 0xFF])  # pattern seed
    b.append({"exact": 0, "room": 6, "copy": 10, "input": 15}[mode])
    if mode == "room":
        b.append(8)
    if tag == "natural":
        b.append(0)  # the natural tag for alg and op
        if alg in TAGGED:
            b.append(0)  # of the default length (a MAC verifying reads the tag's bytes next)
            if op == "decrypt":
                b += bytes((i * 17 + length) & 0xFF for i in range(16))
    else:
        b.append(12)  # no tag
    return bytes(b)


def batch(alg, op, jobs, lanes=None):
    b = bytearray([ALGS.index(alg), 0 if op == "encrypt" else 1])
    if lanes is None:
        b.append(0)
    else:
        b += bytes([4, lanes - 1])
    b.append(len(jobs))
    for j in jobs:
        b += j
    return bytes(b)


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "batch_api")
    os.makedirs(out, exist_ok=True)
    seeds = {
        "cbc_encrypt_blocks": batch("aes-cbc", "encrypt", [job("aes-cbc", n) for n in (16, 64, 1440, 0)]),
        "cbc_pkcs7_mixed": batch(
            "aes-cbc-pkcs7", "encrypt",
            [job("aes-cbc-pkcs7", n, mode=m) for n, m in ((3, "exact"), (16, "copy"), (47, "room"), (0, "exact"), (1500, "copy"))],
        ),
        "ctr_decrypt_lanes4": batch(
            "aes-ctr", "decrypt", [job("aes-ctr", n, key_len=k) for n, k in ((1, 16), (17, 24), (100, 32), (2048, 16))], lanes=4
        ),
        "cfb_encrypt_keys": batch("aes-cfb128", "encrypt", [job("aes-cfb128", n, key_len=32, raw=True) for n in (5, 33, 48)]),
        "ofb_encrypt_many": batch("aes-ofb", "encrypt", [job("aes-ofb", 16 * i + (i % 3), mode="copy") for i in range(12)], lanes=16),
        "ecb_decrypt": batch("aes-ecb", "decrypt", [job("aes-ecb", n, key_len=24) for n in (16, 32, 256)]),
        "cmac_generate": batch("aes-cmac", "encrypt", [job("aes-cmac", n, mode="input") for n in (0, 16, 40, 64, 1000)]),
        "cmac_verify": batch("aes-cmac", "decrypt", [job("aes-cmac", n, mode="input", op="decrypt") for n in (0, 20, 64)]),
        "gcm_encrypt": batch(
            "aes-gcm", "encrypt", [job("aes-gcm", n, mode=m) for n, m in ((0, "exact"), (16, "copy"), (60, "exact"), (1500, "copy"))]
        ),
        "gcm_encrypt_ad": batch("aes-gcm", "encrypt", [job("aes-gcm", n, key_len=32, ad=a) for n, a in ((20, 13), (64, 1), (5, 40))]),
        "gcm_decrypt": batch("aes-gcm", "decrypt", [job("aes-gcm", n, op="decrypt") for n in (0, 16, 33)]),
        "cbc_malformed": batch(
            "aes-cbc", "encrypt",
            [
                job("aes-cbc", 32),
                job("aes-cbc", 32, key_len=20),
                job("aes-cbc", 32, iv=8),
                job("aes-cbc", 32, ad=4),
                job("aes-cbc", 15),
                job("aes-cbc", 48, tag="none"),
                job("aes-cbc", 64, mode="copy"),
            ],
        ),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()

use comb::*;
fn h(s: &str) -> Vec<u8> { (0..s.len()/2).map(|i| u8::from_str_radix(&s[2*i..2*i+2],16).unwrap()).collect() }
fn main() {
    let e = Engine::new().unwrap();
    // FIPS 197
    for (k, p, c) in [("000102030405060708090a0b0c0d0e0f","00112233445566778899aabbccddeeff","69c4e0d86a7b0430d8cdb78070b4c55a"),
      ("000102030405060708090a0b0c0d0e0f1011121314151617","00112233445566778899aabbccddeeff","dda97ca4864cdfe06eaf70a0ec0d7191"),
      ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f","00112233445566778899aabbccddeeff","8ea2b7ca516745bfeafc49904b496089")] {
        let key = AesKey::new(&h(k)).unwrap();
        let mut b: [u8;16] = h(p).try_into().unwrap();
        key.encrypt_block(&mut b); assert_eq!(b.to_vec(), h(c), "enc {k}");
        key.decrypt_block(&mut b); assert_eq!(b.to_vec(), h(p), "dec {k}");
    }
    let key = AesKey::new(&h("2b7e151628aed2a6abf7158809cf4f3c")).unwrap();
    let iv = h("000102030405060708090a0b0c0d0e0f");
    let pt = h("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710");
    for (alg, ct) in [(Algorithm::AesCbc,"7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7"),
       (Algorithm::AesCfb128,"3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6"),
       (Algorithm::AesEcb,"3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4")] {
        let ivx: &[u8] = if alg == Algorithm::AesEcb { &[] } else { &iv };
        for lanes in [1, 3, 8] {
            let e = e.with_lanes(lanes).unwrap();
            let mut bufs: Vec<Vec<u8>> = (0..5).map(|i| pt[..16*(i%5)].to_vec()).collect();
            bufs.push(pt.clone());
            let mut jobs: Vec<Job> = bufs.iter_mut().map(|b| Job::in_place(&key, b).with_iv(ivx)).collect();
            let r = e.process(alg, Op::Encrypt, &mut jobs);
            drop(jobs);
            for (i, b) in bufs.iter().enumerate() { assert!(r[i].is_ok()); assert_eq!(*b, h(ct)[..b.len()].to_vec(), "{alg} lanes {lanes} job {i}"); }
            let mut jobs: Vec<Job> = bufs.iter_mut().map(|b| Job::in_place(&key, b).with_iv(ivx)).collect();
            e.process(alg, Op::Decrypt, &mut jobs);
            drop(jobs);
            for b in &bufs { assert_eq!(*b, pt[..b.len()].to_vec()); }
        }
        println!("{alg} ok");
    }
    let mut tag = [0u8;16];
    e.process_one(Algorithm::AesCmac, Op::Encrypt, Job::mac(&key, &pt[..40]).with_tag(Tag::Out(&mut tag))).unwrap();
    assert_eq!(tag.to_vec(), h("dfa66747de9ae63030ca32611497c827"));
    println!("all ok");
}

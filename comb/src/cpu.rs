//! CPU feature detection (done once) and backend choice.
//!
//! Detection uses `std::is_x86_feature_detected!`, which caches CPUID in a process-wide
//! read-only table: no mutable state of ours. The backend can be forced lower by
//! [`Backend::from_name`] / [`crate::Engine::with_backend`] or the `COMB_BACKEND` environment
//! variable (read by [`crate::Engine::new`]).

use crate::Error;
use core::fmt;

/// The instruction-set features this library cares about, as seen on the running CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuFeatures {
    pub sse2: bool,
    pub ssse3: bool,
    pub sse41: bool,
    pub aes: bool,
    pub pclmulqdq: bool,
    pub avx: bool,
    pub avx2: bool,
    pub vaes: bool,
    pub vpclmulqdq: bool,
    pub avx512f: bool,
    pub avx512vl: bool,
    pub avx512bw: bool,
    pub gfni: bool,
}

impl CpuFeatures {
    /// Features of the CPU this process runs on.
    pub fn detect() -> CpuFeatures {
        #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
        {
            CpuFeatures {
                sse2: std::is_x86_feature_detected!("sse2"),
                ssse3: std::is_x86_feature_detected!("ssse3"),
                sse41: std::is_x86_feature_detected!("sse4.1"),
                aes: std::is_x86_feature_detected!("aes"),
                pclmulqdq: std::is_x86_feature_detected!("pclmulqdq"),
                avx: std::is_x86_feature_detected!("avx"),
                avx2: std::is_x86_feature_detected!("avx2"),
                vaes: std::is_x86_feature_detected!("vaes"),
                vpclmulqdq: std::is_x86_feature_detected!("vpclmulqdq"),
                avx512f: std::is_x86_feature_detected!("avx512f"),
                avx512vl: std::is_x86_feature_detected!("avx512vl"),
                avx512bw: std::is_x86_feature_detected!("avx512bw"),
                gfni: std::is_x86_feature_detected!("gfni"),
            }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
        {
            CpuFeatures::default()
        }
    }

    /// `(name, present)` pairs in a fixed order, for printing.
    pub fn list(&self) -> [(&'static str, bool); 13] {
        [
            ("sse2", self.sse2),
            ("ssse3", self.ssse3),
            ("sse4.1", self.sse41),
            ("aes", self.aes),
            ("pclmulqdq", self.pclmulqdq),
            ("avx", self.avx),
            ("avx2", self.avx2),
            ("vaes", self.vaes),
            ("vpclmulqdq", self.vpclmulqdq),
            ("avx512f", self.avx512f),
            ("avx512vl", self.avx512vl),
            ("avx512bw", self.avx512bw),
            ("gfni", self.gfni),
        ]
    }
}

/// An implementation of the AES lane kernels.
///
/// `Vaes256` packs two messages (or two blocks of one message) per ymm register; `Ni` is the
/// xmm baseline every AES-NI CPU runs. A zmm (AVX-512) backend and a constant-time bitsliced
/// backend are planned: the name `vaes512` is reserved and answers [`Error::Unsupported`].
/// A CPU without AES-NI gets [`Error::Unsupported`] from [`Backend::best`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// AES-NI on xmm registers (SSE2 + AES + SSSE3 + SSE4.1).
    Ni,
    /// VAES on ymm registers (AVX2 + VAES, plus everything `Ni` needs): two lanes per
    /// register, so twice the AES throughput of `Ni` on CPUs that issue two 256-bit VAESENC
    /// per cycle (measured on AMD Zen 3; see README).
    Vaes256,
}

impl Backend {
    /// Every backend this build knows, best first (the order is measured: `comb bench`).
    pub const ALL: &'static [Backend] = &[Backend::Vaes256, Backend::Ni];

    /// The short name used by `COMB_BACKEND` and the CLI.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Ni => "ni",
            Backend::Vaes256 => "vaes256",
        }
    }

    /// Parses a backend name (`"ni"`, `"vaes256"`). `"auto"` is handled by
    /// [`crate::Engine::new`]; `"vaes512"` is reserved for the zmm backend this build does not
    /// have yet and gives [`Error::Unsupported`].
    pub fn from_name(name: &str) -> Result<Backend, Error> {
        if name == "vaes512" {
            return Err(Error::Unsupported(
                "the vaes512 (zmm) backend is not part of this build; use vaes256 or ni",
            ));
        }
        Backend::ALL
            .iter()
            .copied()
            .find(|b| b.name() == name)
            .ok_or_else(|| Error::UnknownBackend(name.to_string()))
    }

    /// Whether this CPU can run the backend.
    pub fn is_supported(self, f: &CpuFeatures) -> bool {
        let ni = f.sse2 && f.ssse3 && f.sse41 && f.aes;
        match self {
            Backend::Ni => ni,
            Backend::Vaes256 => ni && f.avx && f.avx2 && f.vaes,
        }
    }

    /// The backends this CPU can run, best first.
    pub fn supported(f: &CpuFeatures) -> Vec<Backend> {
        Backend::ALL
            .iter()
            .copied()
            .filter(|b| b.is_supported(f))
            .collect()
    }

    /// The fastest backend the given CPU supports.
    pub fn best(f: &CpuFeatures) -> Result<Backend, Error> {
        Backend::ALL
            .iter()
            .copied()
            .find(|b| b.is_supported(f))
            .ok_or(Error::Unsupported(
                "no AES-NI (aes, ssse3, sse4.1); a portable backend is not available yet",
            ))
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Proof that the AES-NI instructions exist on this CPU. Only `cpu` can make one, after
/// checking; kernels take it (by value, it is zero-sized) so that their `unsafe` calls of
/// `#[target_feature]` functions are sound.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NiToken(());

impl NiToken {
    pub(crate) fn get() -> Option<NiToken> {
        let f = CpuFeatures::detect();
        Backend::Ni.is_supported(&f).then_some(NiToken(()))
    }
}

/// Proof that VAES on ymm registers (AVX, AVX2, VAES) and everything [`NiToken`] proves exist
/// on this CPU.
#[derive(Clone, Copy, Debug)]
pub(crate) struct VaesToken(NiToken);

impl VaesToken {
    pub(crate) fn get() -> Option<VaesToken> {
        let f = CpuFeatures::detect();
        Backend::Vaes256
            .is_supported(&f)
            .then_some(VaesToken(NiToken(())))
    }

    /// VAES implies the xmm instructions too.
    pub(crate) fn ni(self) -> NiToken {
        self.0
    }
}

/// Whether a zmm VAESENC issues as often as a ymm one on this CPU, so that the same
/// instruction count does twice the blocks: AMD family 26 (Zen 5) and later, where a loop of
/// independent VAESENC issued two per cycle on xmm, ymm and zmm alike. Not Intel (one zmm
/// per cycle against two ymm) nor AMD Zen 4 (a zmm in two 256-bit halves): there the zmm
/// kernels that exist only for this rate are not chosen (see `aes::vaes::cfb_mac_quads`).
pub(crate) fn zmm_aes_full_rate() -> bool {
    cached_amd_family() >= Some(0x1a)
}

/// Whether OTR's chunks of jobs side by side, one job per zmm lane (`modes::otr::zmm_comb`),
/// run where AVX-512 is: on AMD, whose only AVX-512 CPUs are Zen 4 and later. Their gain is
/// fewer calls and no pools, not the zmm rate: on Zen 4 (zmm VAESENC in two halves), comb
/// engine, batches of 64, TSC cycles/byte, alternated in one session, the realistic mix went
/// from 0.48-0.52 to 0.35-0.39, and every fixed length measured from 16 to 4096 bytes was
/// faster, encrypting and decrypting. Not measured on Intel, which keeps the ymm path.
pub(crate) fn zmm_job_lanes_pay() -> bool {
    cached_amd_family().is_some()
}

/// [`amd_family`], read once and cached (in a VM each CPUID is a trap to the hypervisor).
fn cached_amd_family() -> Option<u32> {
    use core::sync::atomic::{AtomicU32, Ordering};
    // 0: not read yet (no CPU has family 0); `NOT_AMD`: not AMD; else the family.
    const NOT_AMD: u32 = u32::MAX;
    static FAMILY: AtomicU32 = AtomicU32::new(0);
    match FAMILY.load(Ordering::Relaxed) {
        0 => {
            let family = amd_family();
            FAMILY.store(family.unwrap_or(NOT_AMD), Ordering::Relaxed);
            family
        }
        NOT_AMD => None,
        family => Some(family),
    }
}

/// The CPU family (base plus extended) of an AMD CPU; `None` on other vendors and
/// architectures.
fn amd_family() -> Option<u32> {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__cpuid;
        let vendor = __cpuid(0);
        // "AuthenticAMD" in EBX, EDX, ECX.
        let amd =
            vendor.ebx == 0x6874_7541 && vendor.edx == 0x6974_6e65 && vendor.ecx == 0x444d_4163;
        if !amd {
            return None;
        }
        let eax = __cpuid(1).eax;
        let base = (eax >> 8) & 0xf;
        Some(if base == 0xf {
            base + ((eax >> 20) & 0xff)
        } else {
            base
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Proof that AVX-512F, AVX-512VL and AVX-512BW exist beside everything [`VaesToken`] proves:
/// VAES then runs on zmm registers (four blocks per instruction), byte-masked loads and stores
/// cover a message's last bytes, and ymm code has 32 registers (EVEX encoding). Not a backend
/// of its own: kernels that measured faster with it pick it inside `Vaes256` (see
/// `aes::vaes::wide::ctr`, `modes::ocb3`, `sched::exec::run_cfb_mac`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct VaesZmmToken(VaesToken);

impl VaesZmmToken {
    /// Some token iff the CPU, which has what `vaes` proves, also has AVX-512F, AVX-512VL and
    /// AVX-512BW (every AVX-512 CPU with VAES has all three). Cached detections: a few loads,
    /// cheap beside a message's CTR.
    pub(crate) fn with(vaes: VaesToken) -> Option<VaesZmmToken> {
        let ok = std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512bw");
        ok.then_some(VaesZmmToken(vaes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The family read from CPUID is the one Linux reports (`vendor_id`, `cpu family` of
    /// `/proc/cpuinfo`), and the zmm rate follows it (AMD from family 26 on, nothing else), as
    /// do OTR's zmm job lanes (AMD).
    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn amd_family_matches_proc_cpuinfo() {
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let field = |name: &str| {
            info.lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(name))
                .and_then(|l| l.split(':').nth(1))
                .map(|v| v.trim().to_string())
        };
        let (Some(vendor), Some(family)) = (field("vendor_id"), field("cpu family")) else {
            return;
        };
        let family: u32 = family.parse().expect("a decimal family");
        let want = (vendor == "AuthenticAMD").then_some(family);
        assert_eq!(amd_family(), want, "{vendor} family {family}");
        assert_eq!(zmm_aes_full_rate(), want.is_some_and(|f| f >= 0x1a));
        assert_eq!(zmm_job_lanes_pay(), want.is_some());
        // Cached: the same answers again.
        assert_eq!(cached_amd_family(), want);
        assert_eq!(zmm_aes_full_rate(), want.is_some_and(|f| f >= 0x1a));
        assert_eq!(zmm_job_lanes_pay(), want.is_some());
    }
}

//! Clocks and the machine: serialised time-stamp-counter reads, the TSC-to-core-cycle ratio
//! (a dependent integer chain of known length), the TSC frequency, CPU identification and
//! pinning.
//!
//! The TSC ticks at a constant rate whatever the core clock does; papers/000 and 004 ran at a
//! fixed 1.9 GHz where TSC and core cycles coincide. On a turbo machine we report both: TSC
//! cycles per byte (wall-clock, what a user gets) and core cycles per byte (what the
//! micro-architecture does), `cpb_core = cpb_tsc / ticks_per_core_cycle`.

use std::time::{Duration, Instant};

/// Reads the clock at the start of a timed region: `lfence; rdtsc; lfence`, so the read waits
/// for earlier instructions and later ones do not start before it.
#[inline(always)]
pub fn start() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: lfence and rdtsc exist on every x86_64 CPU and touch no memory.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        fallback_ticks()
    }
}

/// Reads the clock at the end of a timed region: `rdtscp; lfence` (rdtscp waits for the
/// timed instructions to finish; the lfence keeps later ones out).
#[inline(always)]
pub fn stop() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{__rdtscp, _mm_lfence};
        let mut aux = 0u32;
        // SAFETY: rdtscp is checked for in `check_clock` before any measurement (and exists on
        // every x86_64 CPU of the last fifteen years); it writes only `aux`.
        unsafe {
            let t = __rdtscp(&mut aux);
            _mm_lfence();
            t
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        fallback_ticks()
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn fallback_ticks() -> u64 {
    use std::sync::OnceLock;
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Fails when this machine has no usable time-stamp counter.
pub fn check_clock() -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    {
        let id = cpu_id();
        if !id.rdtscp {
            return Err("this CPU has no rdtscp instruction; comb bench needs it".into());
        }
        Ok(())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Err(
            "comb bench measures with the x86-64 time-stamp counter; this is not an x86-64 CPU"
                .into(),
        )
    }
}

/// Identification of the CPU from CPUID.
#[derive(Clone, Debug, Default)]
pub struct CpuId {
    pub vendor: String,
    pub brand: String,
    pub family: u32,
    pub model: u32,
    pub stepping: u32,
    pub rdtscp: bool,
    /// CPUID 0x80000007 EDX bit 8: the TSC rate does not change with P-/C-states.
    pub invariant_tsc: bool,
}

/// Reads the CPU identification.
pub fn cpu_id() -> CpuId {
    #[cfg(target_arch = "x86_64")]
    {
        // CPUID exists on every x86_64 CPU. It is a safe function since Rust 1.87 and an
        // unsafe one before (the workspace's MSRV is 1.85), hence the allowed `unsafe`.
        #[allow(unused_unsafe)]
        // SAFETY: CPUID has no preconditions on x86_64.
        let cpuid = |leaf: u32| unsafe { core::arch::x86_64::__cpuid(leaf) };
        let l0 = cpuid(0);
        let mut vendor = Vec::with_capacity(12);
        for r in [l0.ebx, l0.edx, l0.ecx] {
            vendor.extend_from_slice(&r.to_le_bytes());
        }
        let l1 = cpuid(1);
        let base_family = (l1.eax >> 8) & 0xf;
        let ext_family = (l1.eax >> 20) & 0xff;
        let base_model = (l1.eax >> 4) & 0xf;
        let ext_model = (l1.eax >> 16) & 0xf;
        let family = if base_family == 0xf {
            base_family + ext_family
        } else {
            base_family
        };
        let model = if base_family == 0x6 || base_family == 0xf {
            (ext_model << 4) | base_model
        } else {
            base_model
        };
        let max_ext = cpuid(0x8000_0000).eax;
        let mut brand = Vec::with_capacity(48);
        if max_ext >= 0x8000_0004 {
            for leaf in 0x8000_0002u32..=0x8000_0004 {
                let r = cpuid(leaf);
                for x in [r.eax, r.ebx, r.ecx, r.edx] {
                    brand.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        let rdtscp = max_ext >= 0x8000_0001 && (cpuid(0x8000_0001).edx >> 27) & 1 == 1;
        let invariant_tsc = max_ext >= 0x8000_0007 && (cpuid(0x8000_0007).edx >> 8) & 1 == 1;
        let text = |b: Vec<u8>| {
            String::from_utf8_lossy(&b)
                .trim_matches(char::from(0))
                .trim()
                .to_string()
        };
        CpuId {
            vendor: text(vendor),
            brand: text(brand),
            family,
            model,
            stepping: l1.eax & 0xf,
            rdtscp,
            invariant_tsc,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        CpuId::default()
    }
}

/// TSC ticks per second, measured against the OS monotonic clock over `span`.
pub fn tsc_hz(span: Duration) -> f64 {
    let (i0, t0) = (Instant::now(), start());
    while i0.elapsed() < span {
        std::hint::spin_loop();
    }
    let t1 = stop();
    let secs = i0.elapsed().as_secs_f64();
    (t1.wrapping_sub(t0)) as f64 / secs
}

/// Adds executed per chain iteration (each depends on the previous one: one core cycle each).
#[cfg(target_arch = "x86_64")]
const CHAIN_ADDS: u64 = 100;

/// Runs `iters × CHAIN_ADDS` dependent one-cycle `add`s; returns the TSC ticks taken.
#[cfg(target_arch = "x86_64")]
fn add_chain_ticks(iters: u64) -> u64 {
    let t0 = start();
    // SAFETY: register-only arithmetic; no memory, no stack, flags clobbered (the default).
    unsafe {
        core::arch::asm!(
            "2:",
            ".rept 100",
            "add {x}, {one}",
            ".endr",
            "dec {n}",
            "jnz 2b",
            x = inout(reg) 0u64 => _,
            one = in(reg) 1u64,
            n = inout(reg) iters.max(1) => _,
            options(nomem, nostack),
        );
    }
    stop() - t0
}

/// TSC ticks per core cycle: the fastest of `reps` runs of a dependent chain of one-cycle
/// integer adds (`cycles` core cycles each), in TSC ticks, divided by `cycles`. About 0.77 on
/// a 2.3 GHz TSC with the core at 3.0 GHz.
pub fn ticks_per_core_cycle(cycles: u64, reps: usize) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        let iters = (cycles / CHAIN_ADDS).max(1);
        let best = (0..reps.max(1))
            .map(|_| add_chain_ticks(iters))
            .min()
            .unwrap_or(1);
        best as f64 / (iters * CHAIN_ADDS) as f64
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (cycles, reps);
        1.0
    }
}

/// Pins the calling thread to CPU `cpu`.
pub fn pin_to_cpu(cpu: usize) -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        if cpu >= libc::CPU_SETSIZE as usize {
            return Err(format!("CPU {cpu} is out of range"));
        }
        // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET write inside it (cpu checked above);
        // sched_setaffinity reads `size_of::<cpu_set_t>()` bytes of it.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = core::mem::zeroed();
            libc::CPU_ZERO(&mut set);
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if rc != 0 {
            return Err(format!(
                "cannot pin to CPU {cpu}: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(format!("--cpu {cpu}: pinning is only implemented on Linux"))
    }
}

/// CPUs this thread may run on (Linux), in increasing order; empty if unknown.
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sched_getaffinity fills the zeroed set; CPU_ISSET reads inside it.
        unsafe {
            let mut set: libc::cpu_set_t = core::mem::zeroed();
            if libc::sched_getaffinity(0, core::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return Vec::new();
            }
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

/// Keeps the core busy for `span` so it reaches its steady clock before measuring.
pub fn spin(span: Duration) {
    let t = Instant::now();
    let mut x = 0u64;
    while t.elapsed() < span {
        for i in 0..1000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
    }
    std::hint::black_box(x);
}

#[cfg(test)]
mod tests {
    use super::*;

    // No timing here: only that identification returns something sensible.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn cpu_identification() {
        let id = cpu_id();
        assert!(!id.vendor.is_empty());
        assert!(id.family > 0);
    }
}

//! The retry curve (R2) and each store's seeded source of jitter (R5).
//!
//! With `a` attempts made (≥ 1) and `b` the stamped base: `cap = min(b·2^(a−1), 3600 s)`, and the
//! delay is uniform on `[cap/2, cap]`: half guaranteed, half jitter. The exponent is clamped, so no
//! attempt count overflows.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

pub const BACKOFF_CAP_S: f64 = 3600.0;
/// 2⁶⁴ times any positive base is far past the cap: clamping the exponent there avoids overflow.
const MAX_EXPONENT: i32 = 64;

/// The closed range `[cap/2, cap]` a jittered delay lands in after `attempts` attempts.
pub fn backoff_range_s(attempts: i64, base_s: f64) -> (f64, f64) {
    let exponent = (attempts.max(1) - 1).min(i64::from(MAX_EXPONENT)) as i32;
    let cap = (base_s * 2f64.powi(exponent)).min(BACKOFF_CAP_S);
    (cap / 2.0, cap)
}

/// One draw from the curve, with the store's own `rng`.
pub fn backoff_delay_s(attempts: i64, base_s: f64, rng: &mut Rng) -> f64 {
    let (low, high) = backoff_range_s(attempts, base_s);
    low + (high - low) * rng.unit()
}

/// SplitMix64: small, fast, and fully determined by its seed, which is all R5 asks (a replayable run).
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded by `seed` (the decimal text of `open_store`'s seed, of any size), or by the OS
    /// when there is none.
    pub fn new(seed: Option<&str>) -> Rng {
        let state = match seed {
            // FNV-1a over the seed's text: equal seeds give equal streams, whatever their size.
            Some(text) => text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
            }),
            None => os_random(),
        };
        Rng { state }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform on `[0, 1)`, from the top 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// 64 bits the OS chose: the standard library seeds each `RandomState` from the OS's randomness.
pub fn os_random() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.finish()
}

//! The seeded generator behind random offsets, mix decisions and write
//! buffers. xoshiro256** seeded through splitmix64: fast, small, and the same
//! sequence on every machine for the same seed.

/// A seeded pseudo-random generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose sequence depends only on `seed`.
    pub fn new(seed: u64) -> Rng {
        todo!()
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        todo!()
    }
    /// Uniform in `0..n` without modulo bias (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        todo!()
    }
    /// Fill `buf` with random bytes.
    pub fn fill(&mut self, buf: &mut [u8]) {
        todo!()
    }
}

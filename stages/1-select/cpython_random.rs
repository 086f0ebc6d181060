//! CPython's `random.Random(seed).shuffle`, bit for bit, so inferbench selects the same items
//! in the same order as the reference runner for the same dataset release.
//!
//! `Random(n)` for a non-negative integer splits `n` into 32-bit words, least significant
//! first, and seeds MT19937 with `init_by_array`. `shuffle` walks `i` from `len − 1` down to 1
//! swapping `x[i]` with `x[randbelow(i + 1)]`, and `randbelow(n)` draws `bit_length(n)` bits
//! (`genrand_uint32() >> (32 − k)`) until the value is below `n`.

const N: usize = 624;
const M: usize = 397;

pub struct Mt19937 {
    state: [u32; N],
    index: usize,
}

impl Mt19937 {
    fn init_genrand(seed: u32) -> Self {
        let mut state = [0u32; N];
        state[0] = seed;
        for i in 1..N {
            let prev = state[i - 1];
            state[i] = 1_812_433_253u32.wrapping_mul(prev ^ (prev >> 30)).wrapping_add(i as u32);
        }
        Mt19937 { state, index: N }
    }

    /// MT19937 `init_by_array`, as CPython seeds from an integer.
    pub fn from_key(key: &[u32]) -> Self {
        let mut mt = Self::init_genrand(19_650_218);
        let s = &mut mt.state;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let prev = s[i - 1];
            s[i] = (s[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525)).wrapping_add(key[j]).wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                s[0] = s[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = s[i - 1];
            s[i] = (s[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                s[0] = s[N - 1];
                i = 1;
            }
        }
        s[0] = 0x8000_0000;
        mt
    }

    /// CPython's seeding from a non-negative big-endian integer of any width.
    pub fn from_big_endian(seed: &[u8]) -> Self {
        let trimmed: Vec<u8> = seed.iter().copied().skip_while(|b| *b == 0).collect();
        let mut key: Vec<u32> =
            trimmed.rchunks(4).map(|chunk| chunk.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b))).collect();
        if key.is_empty() {
            key.push(0);
        }
        Self::from_key(&key)
    }

    fn twist(&mut self) {
        for i in 0..N {
            let y = (self.state[i] & 0x8000_0000) | (self.state[(i + 1) % N] & 0x7fff_ffff);
            let mut next = self.state[(i + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                next ^= 0x9908_b0df;
            }
            self.state[i] = next;
        }
        self.index = 0;
    }

    pub fn genrand_uint32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `Random._randbelow(n)` for `0 < n < 2^32`.
    pub fn randbelow(&mut self, n: u32) -> u32 {
        let k = 32 - n.leading_zeros();
        loop {
            let r = self.genrand_uint32() >> (32 - k);
            if r < n {
                return r;
            }
        }
    }

    /// `Random.shuffle(items)`.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.randbelow(i as u32 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// Decimal text of a big-endian unsigned integer (the seed as the lock records it).
pub fn big_endian_to_decimal(bytes: &[u8]) -> String {
    let mut digits = Vec::new();
    let mut number: Vec<u8> = bytes.to_vec();
    while number.iter().any(|b| *b != 0) {
        let mut remainder = 0u32;
        for byte in number.iter_mut() {
            let value = (remainder << 8) | u32::from(*byte);
            *byte = (value / 10) as u8;
            remainder = value % 10;
        }
        digits.push(b'0' + remainder as u8);
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    digits.reverse();
    String::from_utf8(digits).expect("ASCII digits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_cpython_random_seed_0_first_outputs() {
        // CPython: random.Random(0).getrandbits(32) twice → 3626764237, 1654615998.
        let mut mt = Mt19937::from_big_endian(&[0]);
        assert_eq!(mt.genrand_uint32(), 3_626_764_237);
        assert_eq!(mt.genrand_uint32(), 1_654_615_998);
    }

    #[test]
    fn matches_cpython_shuffle_of_range_10_with_seed_42() {
        // CPython: x = list(range(10)); random.Random(42).shuffle(x) → [7, 3, 2, 8, 5, 6, 9, 4, 0, 1]
        let mut items: Vec<u32> = (0..10).collect();
        Mt19937::from_big_endian(&[42]).shuffle(&mut items);
        assert_eq!(items, vec![7, 3, 2, 8, 5, 6, 9, 4, 0, 1]);
    }

    #[test]
    fn decimal_conversion_of_big_integers() {
        assert_eq!(big_endian_to_decimal(&[0, 0]), "0");
        assert_eq!(big_endian_to_decimal(&[1, 0]), "256");
        assert_eq!(big_endian_to_decimal(&[0xff; 16]), "340282366920938463463374607431768211455");
    }
}

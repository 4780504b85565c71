// Workload for tests/e2e/demangle.sh: a Rust program whose frames have the
// names Rust makes: modules, generic functions and impls, trait objects,
// closures, std's sort and HashMap, and panics caught by catch_unwind.
// tests/e2e/demangle.sh builds it with plain rustc (no cargo), once with the
// legacy symbol mangling and once with v0.
//
// Every sample should unwind through a chain of distinct functions and a
// recursion of 10 to 25 frames of one generic instance.  Functions are
// #[inline(never)] and each call's result is used after it (black_box), so
// no call becomes a tail call or a loop.
//
// Usage: rustwork [MILLISECONDS]   (CPU time to burn; default 1500)

use std::collections::HashMap;

/// std::hint::black_box, which Debian 12's rustc 1.63 does not have: a
/// volatile read the optimizer cannot see through.
#[inline(always)]
fn black_box<T>(x: T) -> T {
    // SAFETY: reads a valid, aligned T and forgets the original, so the
    // value is moved, not duplicated.
    unsafe {
        let r = std::ptr::read_volatile(&x);
        std::mem::forget(x);
        r
    }
}

mod work {
    use super::*;

    pub trait Shape {
        fn area(&self, seed: u64) -> u64;
    }

    pub struct Square {
        pub side: u64,
    }

    impl Shape for Square {
        #[inline(never)]
        fn area(&self, seed: u64) -> u64 {
            let mut a = self.side | 1;
            for _ in 0..2000 {
                a = black_box(a.wrapping_mul(6364136223846793005).wrapping_add(seed));
            }
            a
        }
    }

    #[inline(never)]
    pub fn sort_them<T: Ord + Copy + From<u32>>(v: &mut Vec<T>, seed: u64) -> T {
        for (i, x) in v.iter_mut().enumerate() {
            *x = T::from(((seed as u32).wrapping_add((i as u32).wrapping_mul(2654435761))) % 100003);
        }
        v.sort_unstable();
        black_box(v[v.len() / 2])
    }

    pub struct Counter<K> {
        counts: HashMap<K, u64>,
    }

    impl<K: std::hash::Hash + Eq + Clone> Counter<K> {
        pub fn new() -> Self {
            Counter { counts: HashMap::new() }
        }

        #[inline(never)]
        pub fn count_all(&mut self, keys: &[K], rounds: u64) -> u64 {
            let mut total = 0;
            for r in 0..rounds {
                let k = &keys[(r as usize) % keys.len()];
                let c = self.counts.entry(k.clone()).or_insert(0);
                *c += 1;
                total += *c;
            }
            black_box(total)
        }
    }

    #[inline(never)]
    fn panic_if_odd(v: u64) -> u64 {
        if black_box(v) & 1 == 1 {
            std::panic::panic_any(v);
        }
        v
    }

    #[inline(never)]
    pub fn catch_it(v: u64) -> u64 {
        match std::panic::catch_unwind(|| panic_if_odd(v)) {
            Ok(r) => black_box(r),
            Err(e) => black_box(*e.downcast_ref::<u64>().unwrap_or(&0) * 3),
        }
    }

    #[inline(never)]
    pub fn apply_n<F: Fn(u64) -> u64>(f: F, n: u64, seed: u64) -> u64 {
        let mut r = 0u64;
        for i in 0..n {
            r = r.wrapping_add(f(seed + i));
        }
        black_box(r)
    }

    /// One of the leaves, by seed: each is a different kind of name.
    #[inline(never)]
    pub fn leaf(seed: u64) -> u64 {
        let r = match seed % 5 {
            0 => {
                let mut v = vec![0u64; 3000];
                sort_them(&mut v, seed)
            }
            1 => {
                let mut v = vec![0u32; 3000];
                sort_them(&mut v, seed) as u64
            }
            2 => {
                let sq = Square { side: seed };
                let sh: &dyn Shape = black_box(&sq);
                sh.area(seed)
            }
            3 => {
                let keys: Vec<String> = (0..26).map(|i| format!("key-{}", i + seed % 7)).collect();
                Counter::new().count_all(&keys, 400)
            }
            _ => apply_n(|x| catch_it(x), 2, seed),
        };
        black_box(r) + 1
    }

    /// The recursion: DEPTH frames of one generic instance above leaf ().
    pub struct Recursion<const TAG: u32>;

    impl<const TAG: u32> Recursion<TAG> {
        #[inline(never)]
        pub fn run(depth: u32, seed: u64) -> u64 {
            let r = if depth == 0 {
                leaf(seed)
            } else {
                Self::run(depth - 1, seed.wrapping_mul(31).wrapping_add(depth as u64))
            };
            black_box(r) ^ depth as u64
        }
    }

    #[inline(never)]
    fn inner_chain(depth: u32, seed: u64) -> u64 {
        black_box(Recursion::<7>::run(depth, seed + 3)) + 3
    }

    #[inline(never)]
    fn through_dyn(f: &dyn Fn(u32, u64) -> u64, depth: u32, seed: u64) -> u64 {
        black_box(f(depth, seed + 2)) + 2
    }

    #[inline(never)]
    pub fn outer_chain(depth: u32, seed: u64) -> u64 {
        let bias = seed & 0xff;
        let with_bias = move |d: u32, s: u64| -> u64 { black_box(inner_chain(d, s + bias)) - bias };
        black_box(through_dyn(&with_bias, depth, seed + 1)) + 1
    }
}

/// CPU time used so far, in ms (utime + stime of /proc/self/stat, in the
/// kernel's 100 Hz ticks): a busy machine must not shorten the recording.
fn cpu_ms() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    ticks as f64 * 10.0
}

fn main() {
    // Quiet panics: the workload panics on purpose, thousands of times.
    std::panic::set_hook(Box::new(|_| {}));
    let budget: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1500.0);
    let start = cpu_ms();
    let (mut seed, mut acc, mut iter) = (1u64, 0u64, 0u32);
    while cpu_ms() - start < budget {
        for _ in 0..16 {
            // Depth 10..25, changing every call.
            let depth = 10 + (iter.wrapping_mul(7)) % 16;
            acc = acc.wrapping_add(work::outer_chain(depth, seed));
            seed += 1;
            iter += 1;
        }
    }
    black_box(acc);
    println!("rustwork: {} iterations", iter);
}

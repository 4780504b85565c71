// A CPU workload for the corpus: recursion, a HashMap, sorting with a
// closure, string formatting; built by cargo with whatever rustc is
// installed (today's Rust links with lld).
use std::collections::HashMap;
use std::time::{Duration, Instant};

#[inline(never)]
fn fib(n: u64) -> u64 {
    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
}

#[inline(never)]
fn count_words(seed: u64) -> usize {
    let mut words: HashMap<String, u32> = HashMap::new();
    let mut x = seed;
    for _ in 0..2000 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *words.entry(format!("w{}", x % 500)).or_insert(0) += 1;
    }
    let mut v: Vec<(&String, &u32)> = words.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.len()
}

#[inline(never)]
fn nest(depth: u32, seed: u64) -> u64 {
    if depth == 0 {
        fib(18 + seed % 4) + count_words(seed) as u64
    } else {
        nest(depth - 1, seed.wrapping_mul(31).wrapping_add(depth as u64)) + 1
    }
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let start = Instant::now();
    let mut total = 0u64;
    let mut n = 0u64;
    while start.elapsed() < Duration::from_secs_f64(secs) {
        total = total.wrapping_add(nest((n % 20) as u32, n));
        n += 1;
    }
    println!("{} rounds, {}", n, total);
}

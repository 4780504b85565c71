// A JavaScript hot loop for tests/e2e/jit.sh: V8 compiles work() and
// outer() (JIT frames), run for argv[2] milliseconds of the process's CPU
// time (not wall time: on a loaded machine a wall-time budget buys fewer
// samples of the hot loop, and V8's start-up a larger share of them).
function work(n) { let s = 0; for (let i = 0; i < n; i++) { s += Math.sqrt(i) * (i & 7); } return s; }
function outer() { let t = 0; for (let k = 0; k < 200; k++) t += work(100000); return t; }
function cpuMs() { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }
const end = cpuMs() + (+process.argv[2] || 2000);
let x = 0; while (cpuMs() < end) x += outer();
console.log(x > 0 ? "ok" : "no");

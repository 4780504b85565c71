// node's workload for the corpus: JIT-compiled JavaScript calling into
// node's own C++ (Buffer, crypto, JSON) so that samples land in V8's
// built-ins and in /usr/bin/node's text.
const crypto = require('crypto');
const seconds = parseFloat(process.argv[2] || '2');
function work(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += Math.sqrt(i) * Math.sin(i);
  return s;
}
function churn(i) {
  const o = { i, a: [i, i * 2, String(i)], t: 'x'.repeat(i % 64) };
  const h = crypto.createHash('sha256').update(JSON.stringify(o)).digest('hex');
  return JSON.parse(JSON.stringify({ h, o })).h.length;
}
const end = Date.now() + seconds * 1000;
let total = 0;
while (Date.now() < end) {
  total += work(2e4);
  for (let i = 0; i < 200; i++) total += churn(i);
}
console.log(total > 0 ? 'done' : 'odd');

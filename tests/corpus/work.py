# python3's workload for the corpus: the interpreter's eval loop, dicts,
# sorting, re and json.
import json
import re
import sys
import time

end = time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 2)
pat = re.compile(r"(\w+)-(\d+)")
total = 0


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


while time.monotonic() < end:
    d = {"k%d" % i: [i, str(i) * 3] for i in range(500)}
    s = json.dumps(d)
    total += len(json.loads(s))
    total += sum(int(m.group(2)) for m in pat.finditer(" ".join("w-%d" % i for i in range(300))))
    total += len(sorted(d, key=lambda k: -len(k)))
    total += fib(15)
print(total)

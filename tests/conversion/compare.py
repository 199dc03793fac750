#!/usr/bin/env python3
"""Compare two extractions: every test, same assertions. An old text that CMake had split at ';'
counts as the same assertion as the whole text (the new runner keeps it whole)."""
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
def semis(xs): return sorted(p for x in xs for p in x.split(';'))
def norm(r):
    r = json.loads(json.dumps(r))
    for k in ('expect', 'forbid'):
        if k in r: r[k] = {s: semis(v) for s, v in r[k].items()}
    return r
print('only before:', sorted(set(a) - set(b)))
print('only after:', sorted(set(b) - set(a)))
diffs = 0
for n in sorted(set(a) & set(b)):
    x, y = norm(a[n]), norm(b[n])
    if x != y:
        diffs += 1
        print('DIFF', n)
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k): print('   ', k, ':', x.get(k), '->', y.get(k))
print(diffs, 'tests differ of', len(set(a) & set(b)))

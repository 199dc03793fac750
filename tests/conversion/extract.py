#!/usr/bin/env python3
"""Extract every program-output assertion from `ctest --show-only=json-v1`, normalised so the
old (STREAM/EXPECT/FORBID) and new (STDOUT/STDERR/NOT_STDOUT/NOT_STDERR) runners compare equal."""
import json, sys
def props(t):
    return {p['name']: p['value'] for p in t.get('properties', [])}
def norm(t):
    cmd = t.get('command', [])
    d = {}
    for a in cmd:
        if a.startswith('-D') and '=' in a:
            k, v = a[2:].split('=', 1); d[k] = v
    script = next((a.split('/')[-1] for a in cmd if a.endswith('.cmake')), None)
    p = props(t)
    extra = (tuple(sorted(p.get('FIXTURES_REQUIRED', []) if isinstance(p.get('FIXTURES_REQUIRED'), list) else [p.get('FIXTURES_REQUIRED')])) if 'FIXTURES_REQUIRED' in p else (),
             tuple(p.get('DEPENDS', [])) if 'DEPENDS' in p else (),
             str(p.get('SKIP_REGULAR_EXPRESSION')), str(p.get('TIMEOUT')))
    def split(v):
        return [x for x in v.split('@@')] if v else []
    dec = lambda s: s.replace('<h2o-lb>', '[').replace('<h2o-rb>', ']').replace('<h2o-semi>', ';')
    if script == 'check_program.cmake':
        exp = {'stdout': [], 'stderr': []}; forb = {'stdout': [], 'stderr': []}
        if 'STREAM' in d:
            exp[d['STREAM']] = split(d['EXPECT']); forb[d['STREAM']] = split(d['FORBID'])
        else:
            exp['stdout'] = split(d['STDOUT']); exp['stderr'] = split(d['STDERR'])
            forb['stdout'] = split(d['NOT_STDOUT']); forb['stderr'] = split(d['NOT_STDERR'])
        rec = dict(kind='program', program=d['PROGRAM'], args=[dec(a) for a in split(d['ARGS'])], exit=d['EXIT'],
                   expect={k: sorted(dec(x) for x in v) for k, v in exp.items()},
                   forbid={k: sorted(dec(x) for x in v) for k, v in forb.items()},
                   requires=d.get('REQUIRES', ''), requires_import=d.get('REQUIRES_IMPORT', ''),
                   env=d.get('ENV_SETTING', ''), timeout=d.get('TIMEOUT', ''), extra=extra)
    elif script == 'check_stable_output.cmake':
        rec = dict(kind='stable', program=d['PROGRAM'], args=[dec(a) for a in split(d['ARGS'])], extra=extra)
    else:
        rec = dict(kind='other', command=cmd, extra=extra)
    return t['name'], rec
out = dict(norm(t) for t in json.load(open(sys.argv[1]))['tests'])
json.dump(out, open(sys.argv[2], 'w'), indent=1, sort_keys=True)
print(len(out), 'tests')

#!/usr/bin/env python3
"""Mechanical conversion: ctest --show-only=json-v1 of the old CMake checks -> tests/checks/*.txt.
usage: convert.py ctest.json source_dir build_dir models_dir python out_dir"""
import json, sys, os, collections, re
ctest, src, build, models, python, outdir = sys.argv[1:7]
D = json.load(open(ctest)); G = D['backtraceGraph']
tests_dir = build + '/tests'
subs = [(tests_dir + '/generate_inputs', '{inputs}'), (tests_dir, '{build}'), (src + '/data', '{data}'),
        (models, '{models}'), (src, '{source}'), (python, '{python}')]
def ph(s):
    for a, b in subs: s = s.replace(a, b)
    return s
def frames(t):
    n = t.get('backtrace'); out = []
    while n is not None:
        node = G['nodes'][n]
        if 'line' in node: out.append((G['files'][node['file']], node['line']))
        n = node.get('parent')
    return out
lines_cache = {}
def src_lines(f):
    if f not in lines_cache: lines_cache[f] = open(f).read().split('\n')
    return lines_cache[f]
def comment_above(f, line):
    L = src_lines(f); i = line - 2  # 0-based index of line above the call
    # climb out of a foreach body/list to the foreach( line, if the call is indented
    if L[line - 1].startswith(' '):
        j = i
        while j >= 0 and not L[j].startswith('foreach(') and (L[j].startswith(' ') or L[j].startswith('#')) :
            j -= 1
        if j >= 0 and L[j].startswith('foreach('): i = j - 1
    out = []
    while i >= 0 and L[i].startswith('#'):
        out.insert(0, L[i]); i -= 1
    return tuple(out)
ALL_SRC = ''.join(open(os.path.join(src, 'tests', f)).read() for f in os.listdir(os.path.join(src, 'tests')) if f.endswith('.cmake'))
def join_semis(vals):
    """CMake split a text holding ';' into two; the maintainer wrote one: join them back."""
    out = []
    for v in vals:
        if out and (out[-1] + ';' + v).replace('"', '\\"') in ALL_SRC.replace('${CMAKE_CURRENT_BINARY_DIR}', tests_dir):
            out[-1] += ';' + v
        else:
            out.append(v)
    return out
def props(t): return {p['name']: p['value'] for p in t.get('properties', [])}
files = collections.defaultdict(list); header = {}
for t in D['tests']:
    cmd = t.get('command', [])
    script = next((a.split('/')[-1] for a in cmd if a.endswith('.cmake')), None)
    if script not in ('check_program.cmake', 'check_stable_output.cmake', 'compare_output.cmake'): continue
    d = dict(a[2:].split('=', 1) for a in cmd if a.startswith('-D') and '=' in a)
    prog = d['PROGRAM']; args = d['ARGS'].split('@@') if d['ARGS'] else []
    if prog.startswith(build + '/bin/'):
        name = prog.split('/')[-1]; head = 'program: ' + name
    elif prog == python:
        name = 'training_' + os.path.basename(args[0])[:-3]; head = 'command: {python} ' + ph(args[0]); args = args[1:]
    elif prog == 'bash':
        name = 'scripts_' + os.path.basename(args[0])[:-3]; head = 'command: bash ' + ph(args[0]); args = args[1:]
    else:
        name = 'scripts_' + os.path.basename(prog)[:-3]; head = 'command: ' + ph(prog)
    header[name] = head
    fr = frames(t); f, line = fr[-1] if fr else ('', 0)
    # the outermost frame inside a *_checks.cmake file
    call = next(((ff, ll) for ff, ll in reversed(fr) if ff.endswith('_checks.cmake') and 'program_checks' not in ff), (f, line))
    files[name].append((call, t, d, args, script))
os.makedirs(outdir, exist_ok=True)
for name, items in files.items():
    items.sort(key=lambda x: (x[0][0].split('/')[-1] != 'lesson_checks.cmake', x[0]))
    out = ['# Checks of ' + header[name].split(': ', 1)[1] + ' (format: README.md in this folder).', header[name], '']
    seen = set()
    for (f, line), t, d, args, script in items:
        c = comment_above(f, line)
        if c and c not in seen:
            seen.add(c); out += list(c)
        out.append('test: ' + t['name'])
        p = props(t)
        # arguments: plain words on one args: line, anything with a space (or empty) on its own arg: line
        words = []
        def flush():
            line = 'args:'
            for w in words:
                if len(line) + 1 + len(w) > 100: out.append(line); line = 'args:'
                line += ' ' + w
            if line != 'args:': out.append(line)
            words.clear()
        for a in args:
            a = ph(a)
            if a == '' or re.search(r'\s', a): flush(); out.append('arg: ' + a)
            else: words.append(a)
        flush()
        if script == 'check_stable_output.cmake':
            out.append('stable: yes')
        elif script == 'compare_output.cmake':
            out.append('stdout is the file: ' + ph(d['EXPECTED_FILE']))
        else:
            if d.get('ENV_SETTING'): out.append('env: ' + ph(d['ENV_SETTING']))
            if d.get('REQUIRES'): out.append('requires file: ' + ph(d['REQUIRES']))
            if d.get('REQUIRES_IMPORT'): out.append('requires python module: ' + d['REQUIRES_IMPORT'])
            if d['EXIT'] != '0': out.append('exit: error')
            if d['TIMEOUT'] != '600': out.append('timeout: ' + d['TIMEOUT'])
            for x in p.get('DEPENDS', []): out.append('after: ' + x)
            st = d['STREAM']
            for e in join_semis(d['EXPECT'].split('@@') if d['EXPECT'] else []): out.append(st + ': ' + ph(e))
            for e in join_semis(d['FORBID'].split('@@') if d['FORBID'] else []): out.append('not in ' + st + ': ' + ph(e))
        out.append('')
    open(os.path.join(outdir, name + '.txt'), 'w').write('\n'.join(out).rstrip('\n') + '\n')
print(len(files), 'files', sum(len(v) for v in files.values()), 'tests')

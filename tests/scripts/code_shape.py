#!/usr/bin/env python3
"""Checks the shape of parqd's source tree; prints each problem found.

usage: code_shape.py SOURCE_ROOT [BUILD_DIR]

1. Layers: writer/ includes nothing from schema/ or daemon/, schema/
   nothing from daemon/.  Headers are included by file name, so each name
   must belong to one file.
2. No cycles between modules, neither in #includes nor in calls.  A
   module is a .c file with its headers (x.c, x.h, and x_int.h for
   internals its own parts share).  Calls are read from the object files
   of BUILD_DIR with nm: module A uses B when A's object needs a symbol
   that B's defines.  A cycle through function pointers is not seen.
3. Size: a source file over 1,000 lines, or a function over 100, states
   why in a comment that says "Why it is long:" (the file's header
   comment, or the comment just above the function)."""
import collections, os, re, subprocess, sys

LAYERS = ['writer', 'schema', 'daemon']          # lower to higher
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
REASON = 'Why it is long:'
MAX_FILE_LINES, MAX_FUNCTION_LINES = 1000, 100


def source_files(root, tops):
    for top in tops:
        for d, _, names in os.walk(os.path.join(root, top)):
            if 'node_modules' in d:
                continue
            for n in sorted(names):
                if n.endswith(('.c', '.h')):
                    yield os.path.relpath(os.path.join(d, n), root)


def module_of(path):
    base = os.path.splitext(path)[0]
    return base[:-4] if base.endswith('_int') else base


def find_cycles(uses):
    """Strongly connected components of more than one module."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(uses.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(uses):
        if v not in index:
            visit(v)
    return found


def check_includes(root, problems):
    layer_of, by_name = {}, collections.defaultdict(list)
    for p in source_files(root, LAYERS):
        layer_of[p] = p.split(os.sep)[0]
        by_name[os.path.basename(p)].append(p)
    for name, paths in sorted(by_name.items()):
        if len(paths) > 1:
            problems.append(f'{name}: one name for several files {paths}')
    uses = collections.defaultdict(set)
    for p, layer in layer_of.items():
        text = open(os.path.join(root, p), encoding='utf-8').read()
        for inc in INCLUDE.findall(text):
            targets = by_name.get(os.path.basename(inc))
            if not targets:
                continue                     # a system or test header
            t = targets[0]
            if LAYERS.index(layer_of[t]) > LAYERS.index(layer):
                problems.append(f'{p}: includes {inc}; {layer}/ may not include '
                                f'from {layer_of[t]}/')
            if module_of(p) != module_of(t):
                uses[module_of(p)].add(module_of(t))
    for cycle in find_cycles(uses):
        problems.append('include cycle between modules: ' + ', '.join(cycle))


def check_calls(root, build, problems):
    objects = []
    for d, _, names in os.walk(os.path.join(build, 'CMakeFiles')):
        lib = d.split(os.sep + 'CMakeFiles' + os.sep)[-1].split(os.sep)[0]
        if lib not in ('pq_writer.dir', 'pq_schema.dir', 'pq_daemon.dir', 'parqd.dir'):
            continue
        for n in names:
            o = os.path.join(d, n)
            # an object whose source moved away is stale, not part of the build
            source = o.split('.dir' + os.sep, 1)[1][:-len('.o')]
            if n.endswith('.c.o') and os.path.exists(os.path.join(root, source)):
                objects.append(o)
    if not objects:
        problems.append(f'{build}: no object files of pq_writer/pq_schema/pq_daemon')
        return
    defined, needed = {}, collections.defaultdict(set)
    for o in objects:
        module = module_of(o.split('.dir' + os.sep, 1)[1][:-len('.c.o')])
        nm = subprocess.run(['nm', o], capture_output=True, text=True, check=True)
        for line in nm.stdout.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in 'TDBRV':
                defined[f[2]] = module
            elif len(f) == 2 and f[0] == 'U':
                needed[module].add(f[1])
    uses = collections.defaultdict(set)
    for module, symbols in needed.items():
        for s in symbols:
            if s in defined and defined[s] != module:
                uses[module].add(defined[s])
    for cycle in find_cycles(uses):
        problems.append('call cycle between modules: ' + ', '.join(cycle))


def function_spans(lines):
    """(name line index, first line, last line) of each function whose
    body opens with '{' and closes with '}' in column 0 (our style)."""
    start, name_at = None, None
    for i, line in enumerate(lines):
        if line.startswith('{'):
            start = i
            name_at = i - 1
            while name_at > 0 and not re.match(r'[A-Za-z_]', lines[name_at]):
                name_at -= 1
            while name_at > 0 and re.match(r'[A-Za-z_]', lines[name_at - 1]) \
                    and not lines[name_at - 1].rstrip().endswith((';', '}', '*/')):
                name_at -= 1
        elif line.startswith('}') and start is not None:
            yield name_at, start, i
            start = None


def check_sizes(root, problems):
    for p in source_files(root, LAYERS + ['tests', 'bench']):
        lines = open(os.path.join(root, p), encoding='utf-8').read().splitlines()
        if len(lines) > MAX_FILE_LINES and REASON not in '\n'.join(lines[:40]):
            problems.append(f'{p}: {len(lines)} lines and no "{REASON}" in its header')
        for name_at, first, last in function_spans(lines):
            if last - first + 1 <= MAX_FUNCTION_LINES:
                continue
            above = '\n'.join(lines[max(0, name_at - 12):name_at])
            if REASON not in above:
                problems.append(f'{p}:{name_at + 1}: function of {last - first + 1} lines '
                                f'and no "{REASON}" above it: {lines[name_at].strip()}')


def main():
    root = sys.argv[1]
    problems = []
    check_includes(root, problems)
    if len(sys.argv) > 2:
        check_calls(root, sys.argv[2], problems)
    check_sizes(root, problems)
    for p in problems:
        print(p)
    print(f'code shape: {len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
"""Instruction mix of each kernel's timed inner loop, from `cuobjdump -sass` output.

    cuobjdump -sass build-gpu-tools/tools/measure/CMakeFiles/ringmm_measure.dir/microbench.cu.o > mb.sass
    lab/reports/ladder_sass.py mb.sass [substring of the kernel name]

For every kernel, the largest loop (a backward branch and the instructions it jumps over) and its
most frequent opcodes: this is how docs/perf/ladder.md checks that the microbenchmarks issue the
instructions they claim (one FFMA / VIADDMNMX / ... per update) and nothing was folded away.
cuobjdump is not in the development image: the nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm
wheels carry it (put their bin/ on PATH); the GPU machines have it installed.
"""
import re, sys, subprocess, collections
text = open(sys.argv[1]).read()
pat = sys.argv[2] if len(sys.argv) > 2 else ''
for f in re.split(r'\n\s*Function : ', text)[1:]:
    name = f.split('\n', 1)[0].strip()
    dem = subprocess.run(['c++filt', name], capture_output=True, text=True).stdout.strip()
    dem = re.sub(r'void ringmm::measure::(\(anonymous namespace\)::)?', '', dem)
    dem = re.sub(r'\(ringmm::measure::\(anonymous namespace\)::Level\)', 'L', dem)
    dem = re.sub(r'\((int, unsigned|ringmm::measure::LadderArgs).*', '', dem).replace('ringmm::', '')
    if pat not in dem: continue
    ins = []
    for line in f.split('\n'):
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+[a-z0-9]*)([^;]*);', line)
        if m: ins.append((int(m.group(1), 16), m.group(3), m.group(4)))
    best = None
    for addr, op, rest in ins:
        if op.startswith('BRA'):
            t = re.search(r'0x([0-9a-f]+)', rest)
            if t and int(t.group(1), 16) < addr:
                body = [o for a, o, _ in ins if int(t.group(1), 16) <= a <= addr]
                if best is None or len(body) > len(best): best = body
    if best is None: print(f'{dem:50s} no loop'); continue
    c = collections.Counter(best)
    print(f'{dem:50s} loop {len(best):5d}: ' + ', '.join(f'{k} {v}' for k, v in c.most_common(8)))

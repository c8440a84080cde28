# Makes DOORBELL_RDNA3_VOP3_MODS of mockgpu/amd/rdna3_operands.h: for each VOP3 opcode, disassembles a probe with every
# OP_SEL bit set and one with every ABS and NEG bit set (llvm-mc-19, gfx1100) and records which bits LLVM prints.
# Needs gen_rdna3_operands.py (as module 'probe') and its VOP3 rows. Usage:
#   python3 gen_rdna3_operands.py mockgpu/amd/rdna3_opcodes.h VOP3 > v3.txt
#   python3 gen_rdna3_mods.py mockgpu/amd/rdna3_opcodes.h v3.txt
# Output: 'op name opsel abs neg'
# (-1 where the probe did not decode); rdna3_operands.h takes -1 as 255 (print every set bit), or 0 for ABS/NEG when
# only that probe failed (the op takes no ABS/NEG; v_cmp_class_*: src0 only).
import os, re, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_rdna3_operands as probe  # reads the opcode tables named by sys.argv[1]
ops = probe.OPS['VOP3']
def mk(op, opsel, abs_, neg, srcs):
    a, b, c = srcs
    return [0xD4000000 | op << 16 | opsel << 11 | abs_ << 8 | 40, a | b << 9 | c << 18 | neg << 29]
tmpl = {}
for l in open(sys.argv[2]):
    f, op, mn, _, tp = l.rstrip('\n').split(' ', 4)
    if f == 'VOP3': tmpl[int(op)] = tp
res = {}
ok = {}
for name, op in ops:
    res[op] = [0, 0, 0]
def srcs_for(op):
    tp = tmpl.get(op, '')
    s = [266, 276, 286]
    if '{2' not in tp: s[2] = 0
    if '{1' not in tp: s[1] = 0
    if re.search(r'\{2\d\}$', tp) is None and 'cndmask' in tp: pass
    return tuple(s)
def nsrc(op):
    s = srcs_for(op)
    return sum(1 for x in s if x)
probes = [mk(op, ((1 << nsrc(op)) - 1) | 8, 0, 0, srcs_for(op)) for _, op in ops]
outs = probe.run(probes)
for (name, op), t in zip(ops, outs):
    if t and t.split()[0].startswith(name) and 'nvalid' not in t:
        ok.setdefault(op, [False, False])[0] = True
        m = re.search(r'op_sel:\[([01,]+)\]', t)
        if m:
            bits = m.group(1).split(',')
            n = len(bits) - 1
            mask = sum(1 << i for i in range(n) if bits[i] == '1') | (8 if bits[-1] == '1' else 0)
            res[op][0] = mask
probes = [mk(op, 0, (1 << nsrc(op)) - 1, (1 << nsrc(op)) - 1, srcs_for(op)) for _, op in ops]
outs = probe.run(probes)
for (name, op), t in zip(ops, outs):
    if t and t.split()[0].startswith(name) and 'nvalid' not in t:
        ok.setdefault(op, [False, False])[1] = True
        operands = t.split(None, 1)[1] if ' ' in t else ''
        for i, reg in enumerate(('v10', 'v20', 'v30')):
            if re.search(r'-\|?v%s' % reg[1:] + r'\b', operands) or re.search(r'-\|?v\[%s:' % reg[1:], operands): res[op][2] |= 1 << i
            if re.search(r'\|v%s\b' % reg[1:], operands) or re.search(r'\|v\[%s:' % reg[1:], operands): res[op][1] |= 1 << i
for name, op in ops:
    o = ok.get(op, [False, False])
    print(op, name, res[op][0] if o[0] else -1, res[op][1] if o[1] else -1, res[op][2] if o[1] else -1)

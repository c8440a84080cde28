# Makes the operand templates of mockgpu/amd/rdna3_operands.h: disassembles a probe encoding of every opcode of
# rdna3_opcodes.h with llvm-mc-19 (gfx1100), each field holding a distinct register (vdst v40, sources v10/v20/v30,
# SGPR variants where an operand must be scalar), and replaces the registers it sees by placeholders that name the
# field and the width LLVM printed. Probes are separated by `s_nop N` markers so one llvm-mc run covers a format.
# Usage: python3 gen_rdna3_operands.py mockgpu/amd/rdna3_opcodes.h VOP1 VOP2 VOPC VOP3 VOP3P SOP2 SOP1 SOPC SOPK
#        SMEM DS FLAT GLOBAL SCRATCH MUBUF > rows.txt   (then each "FORMAT op mnemonic | template" row becomes an X()
#        entry of rdna3_operands.h; FLATRTN/GLOBALRTN rows are the atomics' forms with GLC set).
import re, subprocess, sys
OPS = {}
cur = None
for line in open(sys.argv[1]):
    m = re.match(r'#define DOORBELL_RDNA3_(\w+)\(X\)', line)
    if m: cur = m.group(1); OPS[cur] = []; continue
    m = re.match(r'\s*X\((\w+), (\d+)\)', line)
    if m and cur: OPS[cur].append((m.group(1).lower(), int(m.group(2))))
MARK = 0xBF800000  # s_nop N as a separator

def run(probes):
    """probes: list of word lists; returns the first printed line after each marker (or None)."""
    words = []
    for i, p in enumerate(probes):
        words += [MARK | (i & 0xffff)] + p
    words += [MARK | 0xffff]
    s = ' '.join('0x%02x' % b for w in words for b in w.to_bytes(4, 'little'))
    r = subprocess.run(['llvm-mc-19', '--disassemble', '-triple=amdgcn', '-mcpu=gfx1100'], input=s, capture_output=True, text=True)
    lines = [l.strip() for l in r.stdout.split('\n') if l.strip() and l.strip() != '.text']
    out = [None] * len(probes); idx = None
    for l in lines:
        m = re.match(r's_nop (\d+|0x[0-9a-f]+)$', l)
        if m: idx = int(m.group(1), 0); continue
        if idx is not None and idx < len(probes) and out[idx] is None: out[idx] = l
    return out

def reg(tok):
    m = re.match(r'^([vs])\[(\d+):(\d+)\]$', tok)
    if m: return m.group(1), int(m.group(2)), int(m.group(3)) - int(m.group(2)) + 1
    m = re.match(r'^([vs])(\d+)$', tok)
    if m: return m.group(1), int(m.group(2)), 1
    return None

def templ(text, name, roles):
    """roles: {(kind, first reg): placeholder letter}. Returns mnemonic-with-suffix and template of operands."""
    if text is None: return None
    if 'Invalid' in text or 'invalid' in text: return None
    parts = text.split(None, 1)
    mn = parts[0]
    if not mn.startswith(name): return None
    ops = parts[1] if len(parts) > 1 else ''
    res = []
    for tok in re.split(r'(, | )', ops):
        r = reg(tok)
        if r and (r[0], r[1]) in roles:
            res.append('{%s%d}' % (roles[(r[0], r[1])], r[2]))
        else:
            res.append(tok)
    return mn, ''.join(res)

LIT = 0xBF9F0000
def valu(fmt):
    res = {}
    table = OPS[fmt]
    def mk(op, srcs):
        a, b, c = srcs
        if fmt == 'VOP1': return [0x7E000000 | 40 << 17 | op << 9 | a, LIT]
        if fmt == 'VOP2': return [op << 25 | 40 << 17 | (b - 256) << 9 | a, LIT]
        if fmt == 'VOPC': return [0x7C000000 | op << 17 | (b - 256) << 9 | a, LIT]
        if fmt == 'VOP3': return [0xD4000000 | op << 16 | sd << 8 | 40, a | b << 9 | c << 18, LIT]
        if fmt == 'VOP3P': return [0xCC000000 | op << 16 | 40, a | b << 9 | c << 18, LIT]
    variants = [(266, 276, 286, 0), (266, 276, 0, 0), (266, 276, 286, 50), (266, 276, 0, 50), (266, 276, 30, 0),
                (266, 276, 30, 50), (266, 20, 0, 0), (266, 20, 30, 0), (10, 20, 0, 0), (10, 20, 30, 0), (10, 276, 0, 0), (266, 0, 0, 0)]
    pending = list(table)
    for vi, (a0, a1, a2, sd) in enumerate(variants):
        srcs = (a0, a1, a2)
        if fmt in ('VOP1', 'VOP2', 'VOPC') and vi > 0: continue
        if fmt == 'VOP3P' and sd: continue
        if not pending: break
        outs = run([mk(op, srcs) for _, op in pending])
        left = []
        roles = {('v', 40): 'd', ('s', 40): 's', ('s', 50): 'c'}
        for (s, n) in zip(srcs, '012'):
            if s == 0: continue
            roles[('v', s - 256) if s >= 256 else ('s', s)] = n
        for (name, op), text in zip(pending, outs):
            t = templ(text, name, roles)
            if t is None: left.append((name, op)); continue
            mn, tp = t
            tp = re.sub(r' op_sel_hi:\[[01,]+\]$', '', tp)
            if re.search(r'(^|, )[sv]\[?\d', tp): left.append((name, op)); continue  # an operand the probe did not set
            tp = tp.replace('0xbf9f0000', '{K}')
            res[op] = (mn, tp)
        pending = left
    for name, op in pending: print('# FAILED', fmt, name, op, file=sys.stderr)
    return res


MODS = r'( (offset:swizzle\([^)]*\)|offset:\d+|offset0:\d+|offset1:\d+|offen|idxen|glc|slc|dlc|gds|off))*$'

def generic(fmt, mk, roles, variants, post=None):
    res = {}
    pending = list(OPS[fmt])
    for v in variants:
        if not pending: break
        outs = run([mk(op, v) for _, op in pending])
        left = []
        for (name, op), text in zip(pending, outs):
            t = templ(text, name, roles(v))
            if t is None: left.append((name, op)); continue
            mn, tp = t
            if post: tp = post(tp)
            if tp is None or re.search(r'(^|, )[sv]\[?\d', tp): left.append((name, op)); continue
            res[op] = (mn, tp)
        pending = left
    for name, op in pending: print('# FAILED', fmt, name, op, file=sys.stderr)
    return res

def scalar(fmt):
    r = lambda v: {('s', 40): 'd', ('s', 10): '0', ('s', 20): '1'}
    def post(tp):
        tp = tp.replace('0xbf9f0000', '{K}')
        tp = re.sub(r'hwreg\([^)]*\)', '{h}', tp)
        tp = re.sub(r'(^|, )0x1234$', r'\1{i}', tp)
        tp = re.sub(r'(^|, )4660$', r'\1{I}', tp)
        return tp
    mk = {'SOP2': lambda op, v: [0x80000000 | op << 23 | 40 << 16 | 20 << 8 | 10],
          'SOP1': lambda op, v: [0xBE800000 | 40 << 16 | op << 8 | 10],
          'SOPC': lambda op, v: [0xBF000000 | op << 16 | 20 << 8 | 10],
          'SOPK': lambda op, v: [0xB0000000 | op << 23 | 40 << 16 | 0x1234, LIT]}[fmt]
    return generic(fmt, mk, r, [0], post)

def smem():
    r = lambda v: {('s', 40): 'd', ('s', 12): 'b', ('s', 20): 'o'}
    post = lambda tp: re.sub(r'^40, ', '{P}, ', tp)
    return generic('SMEM', lambda op, v: [0xF4000000 | op << 18 | 40 << 6 | 6, 20 << 25], r, [0], post)

def strip_mods(tp):
    return re.sub(MODS, '', tp)

def ds():
    r = lambda v: {('v', 10): 'a', ('v', 20): '0', ('v', 30): '1', ('v', 40): 'd'}
    def mk(op, v):
        d0, d1, vd, a = v
        return [0xD8000000 | op << 18 | 2 << 8 | 1, a | d0 << 8 | d1 << 16 | vd << 24]
    return generic('DS', mk, r, [(20, 30, 40, 10), (20, 0, 40, 10), (0, 0, 40, 10), (20, 30, 0, 10), (20, 0, 0, 10),
                                 (0, 0, 0, 10), (0, 0, 40, 0)], strip_mods)

def flat(fmt, variants=None):
    seg = {'FLAT': 0, 'SCRATCH': 1, 'GLOBAL': 2}[fmt]
    sa = {'FLAT': 124, 'SCRATCH': 50, 'GLOBAL': 50}[fmt]
    r = lambda v: {('v', 10): 'a', ('v', 20): '0', ('v', 40): 'd', ('s', 50): 'S'}
    def mk(op, v):
        glc, d0, vd = v
        return [0xDC000000 | op << 18 | seg << 16 | glc << 14 | 16, 10 | d0 << 8 | sa << 16 | (seg == 1) << 23 | vd << 24]
    return generic(fmt, mk, r, variants or [(0, 20, 40), (1, 20, 40), (0, 0, 40), (0, 20, 0), (1, 20, 0), (0, 0, 0)], strip_mods)

def mubuf():
    r = lambda v: {('v', 10): 'a', ('v', 20): '0', ('s', 12): 'r', ('s', 30): 'o'}
    def mk(op, v):
        glc, d0 = v
        if d0 is None: return [0xE0000000 | op << 18, 0]
        return [0xE0000000 | op << 18 | glc << 14 | 16, 10 | d0 << 8 | 3 << 16 | 1 << 22 | 30 << 24]
    return generic('MUBUF', mk, r, [(0, 20), (1, 20), (0, 0), (0, None)], strip_mods)

if __name__ == '__main__':
    for fmt in sys.argv[2:]:
        if fmt in ('SOP2', 'SOP1', 'SOPC', 'SOPK'): r = scalar(fmt)
        elif fmt == 'SMEM': r = smem()
        elif fmt == 'DS': r = ds()
        elif fmt in ('FLAT', 'GLOBAL', 'SCRATCH'):
            r = flat(fmt)
            ret = flat(fmt, [(1, 20, 40)])
            for op in sorted(ret):
                if op in r and ret[op][1] != r[op][1]: print(fmt + 'RTN', op, ret[op][0], '|', ret[op][1])
        elif fmt == 'MUBUF': r = mubuf()
        else: r = valu(fmt)
        for op in sorted(r): print(fmt, op, r[op][0], '|', r[op][1])

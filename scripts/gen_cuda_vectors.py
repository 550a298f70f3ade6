#!/usr/bin/env python3
"""Known-answer vectors for the CUDA harness (cuda/harness/vectors/).

Pure Python big integers, fixed seed: the files are reproducible. Every file is a
flat array of little-endian 32-bit words; field elements are in Montgomery form
(blst layout: Fr = 8 words, Fp = 12 words, G1 affine = x then y, 24 words; Fp2 = c0 then
c1, G2 affine = x then y, 48 words).
"""
import os
import random
import sys

R_MOD = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
P_MOD = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB
GX = 0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB
GY = 0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1
ROOT_OF_UNITY = pow(7, (R_MOD - 1) >> 32, R_MOD)
assert ROOT_OF_UNITY == 0x16A2A19EDFE81F20D09B681922C813B4B63683508C2280B93829971F439F0D2B
COSET_G = 7

FR_W, FP_W = 8, 12


def words(x, n):
    return [(x >> (32 * i)) & 0xFFFFFFFF for i in range(n)]


def fr_m(x):
    return (x % R_MOD) * (1 << 256) % R_MOD


def fp_m(x):
    return (x % P_MOD) * (1 << 384) % P_MOD


def put(out, name, ws):
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"".join(w.to_bytes(4, "little") for w in ws))


# --- Curves y^2 = x^3 + b (a = 0), affine with None as infinity, over a field F with
# add, sub, mul, inv and the constants zero and three.
class Fp1:
    zero, three = 0, 3
    add = staticmethod(lambda a, b: (a + b) % P_MOD)
    sub = staticmethod(lambda a, b: (a - b) % P_MOD)
    mul = staticmethod(lambda a, b: a * b % P_MOD)
    inv = staticmethod(lambda a: pow(a, -1, P_MOD))


def ec_add(P, Q, F):
    if P is None:
        return Q
    if Q is None:
        return P
    (x1, y1), (x2, y2) = P, Q
    if x1 == x2:
        if F.add(y1, y2) == F.zero:
            return None
        lam = F.mul(F.mul(F.three, F.mul(x1, x1)), F.inv(F.add(y1, y1)))
    else:
        lam = F.mul(F.sub(y2, y1), F.inv(F.sub(x2, x1)))
    x3 = F.sub(F.sub(F.mul(lam, lam), x1), x2)
    return (x3, F.sub(F.mul(lam, F.sub(x1, x3)), y1))


def ec_mul(k, P, F):
    acc = None
    while k:
        if k & 1:
            acc = ec_add(acc, P, F)
        P = ec_add(P, P, F)
        k >>= 1
    return acc


def g1_add(P, Q):
    return ec_add(P, Q, Fp1)


def g1_mul(k, P):
    return ec_mul(k, P, Fp1)


def g1_words(P):
    if P is None:
        return [0] * 24
    return words(fp_m(P[0]), FP_W) + words(fp_m(P[1]), FP_W)


# --- NTT over Fr, natural order -----------------------------------------------
# --- G2 over y^2 = x^3 + 4(1 + u), Fp2 = Fp[u]/(u^2 + 1) as pairs -----------
G2X = (0x024AA2B2F08F0A91260805272DC51051C6E47AD4FA403B02B4510B647AE3D1770BAC0326A805BBEFD48056C8C121BDB8,
       0x13E02B6052719F607DACD3A088274F65596BD0D09920B61AB5DA61BBDC7F5049334CF11213945D57E5AC7D055D042B7E)
G2Y = (0x0CE5D527727D6E118CC9CDC6DA2E351AADFD9BAA8CBDD3A76D429A695160D12C923AC9CC3BACA289E193548608B82801,
       0x0606C4A02EA734CC32ACD2B02BC28B99CB3E287E85A763AF267492AB572E99AB3F370D275CEC1DA1AAA9075FF05F79BE)


def f2_add(a, b):
    return ((a[0] + b[0]) % P_MOD, (a[1] + b[1]) % P_MOD)


def f2_mul(a, b):
    return ((a[0] * b[0] - a[1] * b[1]) % P_MOD, (a[0] * b[1] + a[1] * b[0]) % P_MOD)


class Fp2:
    zero, three = (0, 0), (3, 0)
    add = staticmethod(f2_add)
    sub = staticmethod(lambda a, b: ((a[0] - b[0]) % P_MOD, (a[1] - b[1]) % P_MOD))
    mul = staticmethod(f2_mul)

    @staticmethod
    def inv(a):
        n = pow((a[0] * a[0] + a[1] * a[1]) % P_MOD, -1, P_MOD)
        return (a[0] * n % P_MOD, -a[1] * n % P_MOD)


def g2_add(P, Q):
    return ec_add(P, Q, Fp2)


def g2_mul(k, P):
    return ec_mul(k, P, Fp2)


def g2_words(P):
    if P is None:
        return [0] * 48
    return [w for c in (P[0][0], P[0][1], P[1][0], P[1][1]) for w in words(fp_m(c), FP_W)]


def msm_words(scal, bases, add, mul, point_words):
    """An MSM's vector: scalars (Montgomery), bases, then the sum of scal[i] * bases[i]."""
    acc = None
    for s, B in zip(scal, bases):
        acc = add(acc, mul(s, B))
    ws = []
    for s in scal:
        ws += words(fr_m(s), FR_W)
    for B in bases:
        ws += point_words(B)
    return ws + point_words(acc)


def ntt(x, w):
    n = len(x)
    if n == 1:
        return list(x)
    e = ntt(x[0::2], w * w % R_MOD)
    o = ntt(x[1::2], w * w % R_MOD)
    out = [0] * n
    t = 1
    for i in range(n // 2):
        v = t * o[i] % R_MOD
        out[i] = (e[i] + v) % R_MOD
        out[i + n // 2] = (e[i] - v) % R_MOD
        t = t * w % R_MOD
    return out


def omega(k):
    return pow(ROOT_OF_UNITY, 1 << (32 - k), R_MOD)


def intt(y, k):
    n = len(y)
    ninv = pow(n, -1, R_MOD)
    return [v * ninv % R_MOD for v in ntt(y, pow(omega(k), -1, R_MOD))]


def coset_ntt(x, k):
    return ntt([v * pow(COSET_G, j, R_MOD) % R_MOD for j, v in enumerate(x)], omega(k))


def icoset_ntt(y, k):
    ginv = pow(COSET_G, -1, R_MOD)
    return [v * pow(ginv, j, R_MOD) % R_MOD for j, v in enumerate(intt(y, k))]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "cuda", "harness", "vectors")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(0x9E3779B97F4A7C15)

    # Field records: a, b, a*b, a+b, a-b, a^2 (Montgomery) and canonical a.
    for name, mod, w, conv in (("fr", R_MOD, FR_W, fr_m), ("fp", P_MOD, FP_W, fp_m)):
        specials = [0, 1, 2, mod - 1, mod - 2, (mod - 1) // 2, (mod + 1) // 2]
        vals = specials + [rng.randrange(mod) for _ in range(256 - len(specials))]
        ws = []
        for i, a in enumerate(vals):
            b = vals[(i * 7 + 3) % len(vals)] if i % 3 else rng.randrange(mod)
            for v in (a, b, a * b, a + b, a - b, a * a):
                ws += words(conv(v), w)
            ws += words(a, w)
        put(out, f"{name}_ops.bin", ws)

    # NTT at n = 2^10 (and 2^11 for an odd split): x, forward, inverse, coset forward, coset inverse.
    for k in (10, 11):
        n = 1 << k
        x = [rng.randrange(R_MOD) for _ in range(n)]
        ws = []
        for vec in (x, ntt(x, omega(k)), intt(x, k), coset_ntt(x, k), icoset_ntt(x, k)):
            for v in vec:
                ws += words(fr_m(v), FR_W)
        put(out, f"ntt_{k}.bin", ws)

    # H pipeline at n = 2^10: a, b, c then h.
    k = 10
    n = 1 << k
    a, b, c = ([rng.randrange(R_MOD) for _ in range(n)] for _ in range(3))
    ea, eb, ec = (coset_ntt(intt(v, k), k) for v in (a, b, c))
    zinv = pow((pow(COSET_G, n, R_MOD) - 1) % R_MOD, -1, R_MOD)
    d = [(ea[i] * eb[i] - ec[i]) * zinv % R_MOD for i in range(n)]
    h = icoset_ntt(d, k)
    ws = []
    for vec in (a, b, c, h):
        for v in vec:
            ws += words(fr_m(v), FR_W)
    put(out, "hpoly_10.bin", ws)

    # G1: generator and 32 multiples k*G with k (canonical, 8 words) and the affine result,
    # then one MSM of 64 terms with edge cases (zero, one, r-1, infinity base).
    G = (GX, GY)
    assert (GY * GY - GX ** 3 - 4) % P_MOD == 0
    assert g1_mul(R_MOD, G) is None
    ws = g1_words(G)
    ks = [1, 2, 3, R_MOD - 1] + [rng.randrange(R_MOD) for _ in range(28)]
    for kk in ks:
        ws += words(kk, FR_W) + g1_words(g1_mul(kk, G))
    put(out, "g1_mul.bin", ws)

    m = 64
    bases = [g1_mul(rng.randrange(1, R_MOD), G) for _ in range(m)]
    bases[5] = None
    scal = [rng.randrange(R_MOD) for _ in range(m)]
    scal[0], scal[1], scal[2], scal[3] = 0, 1, R_MOD - 1, (R_MOD - 1) // 2
    put(out, "msm_64.bin", msm_words(scal, bases, g1_add, g1_mul, g1_words))
    # G2: 48 points (k*G2, an infinity, a repeat and a negation among them), an index list
    # with repeats, then the sum of all points and the sum over the list:
    # [n, m, points (48 words each), idx (m words), sum all, sum over idx].
    G2 = (G2X, G2Y)
    rhs = f2_add(f2_mul(G2X, f2_mul(G2X, G2X)), (4, 4))
    assert f2_mul(G2Y, G2Y) == rhs
    n = 48
    pts = [g2_mul(rng.randrange(1, R_MOD), G2) for _ in range(n)]
    pts[7] = None
    pts[9] = pts[8]
    pts[11] = (pts[10][0], ((-pts[10][1][0]) % P_MOD, (-pts[10][1][1]) % P_MOD))
    idx = [i for i in range(n) if i % 3 == 1] + [8, 8, 20]
    total = None
    for P in pts:
        total = g2_add(total, P)
    sub = None
    for i in idx:
        sub = g2_add(sub, pts[i])
    ws = [n, len(idx)]
    for P in pts:
        ws += g2_words(P)
    ws += idx + g2_words(total) + g2_words(sub)
    put(out, "g2_sum.bin", ws)
    # G2 fixed-base products from a 4-bit window table (the layout of the engine's FixedBase:
    # table[w * half + d - 1] = d * 2^(4w) * G2): [bits, nwin, count, table (nwin * half points),
    # then count times (scalar canonical, 8 words; product affine, 48 words)].
    bits, half = 4, 8
    nwin = -(-255 // bits) + (255 % bits == 0)
    table, wb = [], G2
    for _ in range(nwin):
        acc = wb
        for _ in range(half):
            table.append(acc)
            acc = g2_add(acc, wb)
        wb = g2_add(table[-1], table[-1])
    ks = [0, 1, 2, 7, 8, 9, 15, 16, R_MOD - 1, (R_MOD - 1) // 2, (1 << 254) - 1]
    ks += [rng.randrange(R_MOD) for _ in range(5)]
    ws = [bits, nwin, len(ks)]
    for P in table:
        ws += g2_words(P)
    for kk in ks:
        ws += words(kk, FR_W) + g2_words(g2_mul(kk, G2))
    put(out, "g2_fixed.bin", ws)
    # G2 MSM of 40 terms with edge cases: scalars 0, 1, 2, r-1, (r-1)/2, (r+1)/2, 2^254 - 1 and
    # the same scalar twice; bases with an infinity, a repeat and a negation:
    # [n, scalars (n x 8 words, Montgomery), bases (n x 48 words), sum (48 words)].
    m = 40
    bases = [g2_mul(rng.randrange(1, R_MOD), G2) for _ in range(m)]
    bases[5] = None
    bases[9] = bases[8]
    bases[11] = (bases[10][0], ((-bases[10][1][0]) % P_MOD, (-bases[10][1][1]) % P_MOD))
    scal = [rng.randrange(R_MOD) for _ in range(m)]
    scal[:7] = [0, 1, 2, R_MOD - 1, (R_MOD - 1) // 2, (R_MOD + 1) // 2, (1 << 254) - 1]
    scal[13] = scal[12]
    put(out, "g2_msm.bin", [m] + msm_words(scal, bases, g2_add, g2_mul, g2_words))
    total = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print(f"wrote vectors to {out} ({total} bytes)")


if __name__ == "__main__":
    main()

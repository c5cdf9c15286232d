"""ADBench's bundle adjustment (microsoft/ADBench, src/cpp/shared/ba.h, ``computeReprojError``)
for one observation: the NiLang paper's BA benchmark, one lane per observation.

A camera is rot (3, Rodrigues), C (3, centre), f (focal length), x0 (2, principal point)
and k (2, radial distortion), ADBench's eleven parameters in separate arrays; a point is X
(3) with a weight w; the observation is the pixel feat (2):

    Xo   = X - C
    Xcam = Rodrigues(rot) Xo = Xo cos t + (u x Xo) sin t + u (u . Xo)(1 - cos t)
           (t = |rot|, u = rot / t)
    p    = Xcam[0:2] / Xcam[2]
    p   *= 1 + k1 |p|^2 + k2 |p|^4
    err  = w (f p + x0 - feat)

``ba_x`` and ``ba_y`` take ``err[0]`` and ``err[1]`` as their loss: the gradients of the
two, in the fifteen parameters (rot, C, f, x0, k, X, w), are the rows of the 2 x 15
Jacobian ADBench asks for.  ba.h's branch for a zero rotation (``u x Xo`` with rot itself)
is left out: the domains keep every rot component >= 0.05.  Reference (float64) and inputs:
``examples/nilang/workloads.py`` (``ba_inputs``, ``ba_reproj``, ``ba_jacobian``).

    revasm compile examples/nilang/ba.py:ba_x --width 64 -o ba_x.pal
"""
from revasm.compiler import (
    Array,
    Fixed,
    Loss,
    ancilla,
    cos,
    reversible,
    routine,
    sin,
    sq,
    sqrt,
)


@reversible
def reproj(err: Array[Fixed, 2], rot: Array[Fixed, 3], c: Array[Fixed, 3], f: Fixed,
           x0: Array[Fixed, 2], k: Array[Fixed, 2], x: Array[Fixed, 3], w: Fixed,
           feat: Array[Fixed, 2]):
    """err += w (project(camera, x) - feat)."""
    with routine():
        xo = ancilla(Array[Fixed, 3])     # X - C
        u = ancilla(Array[Fixed, 3])      # the rotation's unit axis
        ux = ancilla(Array[Fixed, 3])     # u x Xo
        xcam = ancilla(Array[Fixed, 3])   # the rotated point
        pl = ancilla(Array[Fixed, 2])     # the distorted projection
        sqtheta = ancilla(0.0)
        theta = ancilla(0.0)
        ct = ancilla(0.0)
        st = ancilla(0.0)
        omc = ancilla(0.0)
        dot = ancilla(0.0)
        along = ancilla(0.0)
        p0 = ancilla(0.0)
        p1 = ancilla(0.0)
        rsq = ancilla(0.0)
        dist = ancilla(0.0)
        for j in range(3):
            xo[j] += x[j] - c[j]
        sqtheta += sq(rot[0]) + sq(rot[1]) + sq(rot[2])
        theta += sqrt(sqtheta)
        ct += cos(theta)
        st += sin(theta)
        for j in range(3):
            u[j] += rot[j] / theta
        ux[0] += u[1] * xo[2] - u[2] * xo[1]
        ux[1] += u[2] * xo[0] - u[0] * xo[2]
        ux[2] += u[0] * xo[1] - u[1] * xo[0]
        dot += u[0] * xo[0] + u[1] * xo[1] + u[2] * xo[2]
        omc += 1.0 - ct
        along += dot * omc
        for j in range(3):
            xcam[j] += xo[j] * ct + ux[j] * st + u[j] * along
        p0 += xcam[0] / xcam[2]
        p1 += xcam[1] / xcam[2]
        rsq += sq(p0) + sq(p1)
        dist += 1.0 + k[0] * rsq + k[1] * sq(rsq)
        pl[0] += p0 * dist
        pl[1] += p1 * dist
    err[0] += w * (f * pl[0] + x0[0] - feat[0])
    err[1] += w * (f * pl[1] + x0[1] - feat[1])
    ~routine


# One observation: a camera near the origin, turned a little, a point 3..5 away in x, y, z
# (the domains keep its depth after the turn above 0.4, so the projection stays bounded).
ROT = (0.12, 0.07, 0.15)
CENTRE = (0.05, -0.02, 0.1)
FOCAL = 1.2
PRINCIPAL = (0.01, -0.015)
RADIAL = (-0.08, 0.006)
POINT = (3.4, 3.7, 4.6)
WEIGHT = 0.9
FEAT = (0.8, 0.9)


@reversible
def ba_x(out: Loss, rot: Array[Fixed[0.05, 0.2], 3] = ROT,
         c: Array[Fixed[-0.2, 0.2], 3] = CENTRE, f: Fixed[0.8, 1.6] = FOCAL,
         x0: Array[Fixed[-0.05, 0.05], 2] = PRINCIPAL,
         k: Array[Fixed[-0.1, 0.1], 2] = RADIAL, x: Array[Fixed[3, 5], 3] = POINT,
         w: Fixed[0.5, 1.0] = WEIGHT, feat: Array[Fixed[-2, 2], 2] = FEAT):
    """The first row of the Jacobian: the gradient of err[0]."""
    with routine():
        err = ancilla(Array[Fixed, 2])
        reproj(err, rot, c, f, x0, k, x, w, feat)
    out += err[0]
    ~routine


@reversible
def ba_y(out: Loss, rot: Array[Fixed[0.05, 0.2], 3] = ROT,
         c: Array[Fixed[-0.2, 0.2], 3] = CENTRE, f: Fixed[0.8, 1.6] = FOCAL,
         x0: Array[Fixed[-0.05, 0.05], 2] = PRINCIPAL,
         k: Array[Fixed[-0.1, 0.1], 2] = RADIAL, x: Array[Fixed[3, 5], 3] = POINT,
         w: Fixed[0.5, 1.0] = WEIGHT, feat: Array[Fixed[-2, 2], 2] = FEAT):
    """The second row of the Jacobian: the gradient of err[1]."""
    with routine():
        err = ancilla(Array[Fixed, 2])
        reproj(err, rot, c, f, x0, k, x, w, feat)
    out += err[1]
    ~routine

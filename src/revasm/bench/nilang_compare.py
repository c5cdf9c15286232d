"""NiLang's gradient workloads on the compiled engine next to numpy, JAX and PyTorch.

    revasm bench nilang_compare [--quick]

Each workload is a program of ``examples/nilang`` compiled for gradients at W = 64 and
run through the gradient protocol (forward, G[loss] = 1, backward) on a batch of lanes of
the compiled engine, every lane holding the same inputs.  In the same run: numpy float64
over the same batch (the forward pass and, where it is short to write, the hand-written
reverse pass), JAX ``jit(vmap(grad))`` (``jit(grad)`` for GMM, one gradient) and PyTorch
reverse mode over the same batch, each timed after a warm-up.  JAX and PyTorch are
optional (``pip install revasm[compare]``): a missing one is recorded with that note.

The compiled engine runs in a process of its own with a time and memory budget
(``common.run_child``): the first gradient compiles the program's kernels (or loads them
from the kernel cache), which for programs of thousands of instructions can take longer
than a benchmark should wait; that time is recorded apart (``first_gradient_s``) and a
compile that does not finish within the budget is recorded as such.  ``--quick`` runs
the NiLang dot product only (``dot``, four elements), the path every workload takes.
"""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from revasm.compiler.api import DEFAULT_LEVEL

from .common import EXAMPLES as REPOSITORY_EXAMPLES
from .common import (
    best_seconds,
    child_outcome,
    child_python,
    example_module,
    jax_gmm_loss,
    run_child,
)

if TYPE_CHECKING:
    from revasm.compiler.api import CompiledProgram
    from revasm.sim.host import BatchGradient

EXAMPLES = REPOSITORY_EXAMPLES / "nilang"
COMPARE_NOTE = "pip install revasm[compare]"
#: Seconds the compiled engine's process may take (its first gradient compiles kernels).
BUDGET_S = 300
#: --quick compiles small programs only: its budget is a safety net, generous for a loaded
#: machine (a 52-instruction program took over 120 s at load average 20).
QUICK_BUDGET_S = 900


@dataclass(frozen=True)
class Workload:
    file: str
    entry: str
    lanes: int
    #: how much of a gradient numpy's float64 baseline computes
    numpy_what: str
    #: the program's NPTS when it is not the file's (the GMM at the paper's 10k points)
    points: int | None = None


WORKLOADS = {
    "dot": Workload("dot.py", "dot", 10_000, "forward and hand-written reverse pass, batched"),
    "givens_network_n100": Workload("givens100.py", "givens_loss", 1_000,
                                    "forward and hand-written reverse pass, batched"),
    "sparse_frobenius_dot": Workload("sparse_dot.py", "sparse_dot", 10_000,
                                     "forward and hand-written reverse pass, batched"),
    "petersen_embedding": Workload("petersen.py", "embedding_loss", 10_000,
                                   "forward loss only, batched"),
    "adbench_gmm": Workload("gmm.py", "gmm", 4, "forward objective only, one evaluation"),
    "adbench_gmm_10k": Workload("gmm.py", "gmm", 1, "forward objective only, one evaluation",
                                points=10_000),
    "adbench_ba_x": Workload("ba.py", "ba_x", 10_000,
                             "forward reprojection error only, batched"),
    "adbench_ba_y": Workload("ba.py", "ba_y", 10_000,
                             "forward reprojection error only, batched"),
}
#: The two rows of BA's 2 x 15 Jacobian: one gradient each, per observation.
BA_ROWS = ("adbench_ba_x", "adbench_ba_y")
#: The -O0 reference gradient runs on the reference engine: up to this many points.
PLAIN_MAX_POINTS = 1000
#: Under 64 lanes the engine runs one thread: --quick compiles only the serial kernels.
QUICK = {"dot": 50}


def _modules():
    cases = example_module(EXAMPLES / "cases.py", "nilang_cases")
    return cases, example_module(EXAMPLES / "workloads.py", "nilang_workloads")


def inputs_of(name: str) -> dict:
    """The workload's inputs (every parameter but the loss)."""
    cases, workloads = _modules()
    by_name = {case.name: case for case in cases.CASES}
    if name == "givens_network_n100":
        return workloads.givens_inputs()
    if name == "adbench_gmm":
        return workloads.gmm_inputs()
    if name == "adbench_gmm_10k":
        return workloads.gmm_inputs(n=WORKLOADS[name].points)
    if name in BA_ROWS:
        return workloads.ba_inputs(1)[0]
    return dict(by_name[{"sparse_frobenius_dot": "sparse_dot", "petersen_embedding": "petersen",
                         "dot": "dot"}[name]].inputs)


# --- the compiled engine, in a process of its own ------------------------------------------

def _gradient_names(program: CompiledProgram) -> tuple[str, dict[str, list[str]]]:
    """The loss parameter and, per differentiated parameter, its word names (as
    ``revasm.programs.grad_program`` chooses them: every Fixed parameter but the loss)."""
    from revasm.compiler.ir import nodes as ir
    from revasm.programs import loss_parameter, word_names

    f = program.function
    loss = loss_parameter(program)
    names = {}
    for p in f.params:
        element = p.type.element if isinstance(p.type, ir.ArrayType) else p.type
        if p is loss or element != ir.FIXED:
            continue
        names[p.name] = word_names(program, p)
    return loss.name, names


def child(arguments: list[str]) -> None:
    """In the child: compile, the first gradient (kernels: compiled, or loaded from the
    cache), then the timed batch."""
    from revasm.isa.fixed_point import word_format
    from revasm.programs import load_inputs
    from revasm.sim.compiled.machine import CompiledLanes
    from revasm.sim.engines import engine
    from revasm.sim.host import batch_gradient

    name, lanes = arguments[0], int(arguments[1])
    workload = WORKLOADS[name]
    started = time.perf_counter()
    program = compile_workload(workload)
    compile_s = time.perf_counter() - started
    print(json.dumps({"compile_program_s": compile_s, "image_words": len(program.image),
                      "stopped_in": "the first gradient (compiling or loading the kernels)"}),
          flush=True)
    loss, names = _gradient_names(program)
    wrt = [word for words in names.values() for word in words]
    inputs = inputs_of(name)

    def gradient(count: int) -> tuple[BatchGradient, float]:
        machine = engine("compiled").load(program.image, count)
        load_inputs(program, machine, inputs)
        started = time.perf_counter()
        result = batch_gradient(machine, loss=loss, wrt=wrt)
        return result, time.perf_counter() - started

    started = time.perf_counter()
    gradient(min(lanes, 64))  # 64 lanes and more run on the engine's threads: their kernel
    first_s = time.perf_counter() - started
    print(json.dumps({"compile_program_s": compile_s, "image_words": len(program.image),
                      "first_gradient_s": first_s, "stopped_in": "the timed batch"}),
          flush=True)
    result, seconds = gradient(lanes)
    if seconds * 2 < 10:  # short enough to repeat: the best of two
        result, again = gradient(lanes)
        seconds = min(seconds, again)
    plain = plain_gradient(name, result, wrt)
    fmt = word_format(program.image.width)
    lane_0 = {p: [float(fmt.to_fraction(int(result.gradient[word][0]))) for word in words]
              for p, words in names.items()}
    same = all(int(result.gradient[word][0]) == int(result.gradient[word][-1]) for word in wrt)
    steps = int(result.forward_steps[0]) + int(result.machine.steps[0])
    print(json.dumps({
        "compile_program_s": compile_s, "first_gradient_s": first_s, "image_words":
        len(program.image), "lanes": lanes, "gradient_s": seconds, "per_gradient_s":
        seconds / lanes, "instructions_per_gradient": steps,
        "lane_instructions_per_s": steps * lanes / seconds,
        "level": DEFAULT_LEVEL, **plain,
        "lanes_faulted": int(np.sum(~result.ok)), "first_and_last_lane_equal": same,
        "kernel": "interpreter" if isinstance(result.machine, CompiledLanes)
        and result.machine.uses_interpreter() else "program",
        "loss": float(fmt.to_fraction(int(result.loss[0]))), "gradient_lane_0": lane_0}),
        flush=True)


def compile_workload(workload: Workload, level: int = DEFAULT_LEVEL) -> CompiledProgram:
    """The workload's program for gradients at W = 64 (``points``: the GMM with its NPTS
    and the CONSTANT that depends on it set for that many points)."""
    from revasm.compiler import compile_file, compile_source

    path = EXAMPLES / workload.file
    if workload.points is None:
        return compile_file(path, workload.entry, width=64, for_gradient=True, level=level)
    _, workloads = _modules()
    lines = path.read_text().splitlines()
    values = {"NPTS": str(workload.points),
              "CONSTANT": repr(workloads.gmm_constant(workload.points))}
    for name, value in values.items():
        at = [k for k, line in enumerate(lines) if line.startswith(f"{name} = ")]
        if len(at) != 1:
            raise ValueError(f"{workload.file} has no one line {name} = ...")
        lines[at[0]] = f"{name} = {value}"
    return compile_source("\n".join(lines) + "\n", workload.entry, str(path), width=64,
                          for_gradient=True, level=level)


def plain_gradient(name: str, optimised: BatchGradient, wrt: list[str]) -> dict:
    """The workload compiled at -O0 (the plain lowering, the reference of every level),
    one gradient on the reference engine: its instructions, and whether its loss and
    gradient words equal lane 0's of the optimised program (they must: docs/language.md,
    *Optimisation levels*)."""
    from revasm.programs import load_inputs
    from revasm.sim.engines import engine
    from revasm.sim.host import batch_gradient

    workload = WORKLOADS[name]
    if workload.points is not None and workload.points > PLAIN_MAX_POINTS:
        return {"instructions_per_gradient_O0": None, "gradient_words_equal_O0": None,
                "O0_note": f"not run: the -O0 gradient runs on the reference engine, "
                           f"compared up to {PLAIN_MAX_POINTS} points (adbench_gmm)"}
    program = compile_workload(workload, level=0)
    machine = engine("reference").load(program.image, 1)
    load_inputs(program, machine, inputs_of(name))
    result = batch_gradient(machine, loss=optimised.loss_name, wrt=wrt)
    equal = int(result.loss[0]) == int(optimised.loss[0]) and all(
        int(result.gradient[word][0]) == int(optimised.gradient[word][0]) for word in wrt)
    return {"instructions_per_gradient_O0": int(result.forward_steps[0])
            + int(result.machine.steps[0]), "gradient_words_equal_O0": bool(equal)}


def compiled(name: str, lanes: int, budget: float) -> dict:
    done = run_child(child_python("nilang_compare", name, str(lanes)), budget)
    stages = [json.loads(line) for line in done["stdout"].splitlines() if line.startswith("{")]
    doing = stages[-1].get("stopped_in", "") if stages else "compiling the program"
    row = child_outcome(done, budget, doing)
    if row["status"] != "measured" and stages:  # what the child said before it stopped
        row.update(stages[-1])
    return row


# --- float64 references of the gradients ---------------------------------------------------

def _central_differences(function: Callable[[np.ndarray], float], x: np.ndarray,
                         h: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        moved = [x.copy(), x.copy()]
        moved[0][index] += h
        moved[1][index] -= h
        g[index] = (function(moved[0]) - function(moved[1])) / (2 * h)
    return g


def reference_gradient(name: str, inputs: dict) -> dict[str, np.ndarray]:
    """d loss / d parameter in float64 (by hand, or central differences), flat."""
    cases, workloads = _modules()
    if name == "dot":
        return {"x": np.asarray(inputs["y"], float), "y": np.asarray(inputs["x"], float)}
    if name == "givens_network_n100":
        _, g = workloads.givens_loss(inputs["x"], inputs["theta"], inputs["w"])
        return {"x": np.asarray(g["x"]), "theta": np.asarray(g["theta"])}
    if name == "sparse_frobenius_dot":
        a_rows, a_cols, b_rows, b_cols = _sparse_positions(inputs)
        return {"a_nzval": cases.SPARSE_B[a_rows, a_cols],
                "b_nzval": cases.SPARSE_A[b_rows, b_cols]}
    if name == "petersen_embedding":
        x = np.asarray(inputs["x"], float)
        return {"x": _central_differences(cases.petersen_loss, x).ravel()}
    if name in BA_ROWS:
        row = workloads.ba_jacobian(inputs)[BA_ROWS.index(name)]
        out, at = {}, 0
        for p in workloads.BA_PARAMS:
            size = np.atleast_1d(inputs[p]).size
            out[p] = row[at:at + size]
            at += size
        return out
    g = workloads.gmm_gradient(inputs["alphas"], inputs["means"], inputs["icf"], inputs["x"])
    return {k: np.asarray(v).ravel() for k, v in g.items()}


def _sparse_positions(inputs: dict) -> tuple[list[int], ...]:
    """(row, column) of every stored entry of A, then of B."""
    out = []
    for side in ("a", "b"):
        colptr, rowval = inputs[f"{side}_colptr"], inputs[f"{side}_rowval"]
        rows = [rowval[k] for k in range(colptr[-1])]
        cols = [j for j in range(len(colptr) - 1) for _ in range(colptr[j], colptr[j + 1])]
        out += [rows, cols]
    return tuple(out)


def _sparse_matches(inputs: dict) -> tuple[np.ndarray, np.ndarray]:
    """Indices into a_nzval and b_nzval of the entries both matrices store (the merge,
    done once on the host: the frameworks' programs get the sparsity pattern for free)."""
    a_rows, a_cols, b_rows, b_cols = _sparse_positions(inputs)
    b_at = {(r, c): k for k, (r, c) in enumerate(zip(b_rows, b_cols))}
    pairs = [(k, b_at[(r, c)]) for k, (r, c) in enumerate(zip(a_rows, a_cols)) if (r, c) in b_at]
    return np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])


# --- numpy, JAX, PyTorch --------------------------------------------------------------------

def _batched(inputs: dict, keys: tuple[str, ...], lanes: int) -> list[np.ndarray]:
    """Each input with a leading batch axis of ``lanes`` copies."""
    return [np.repeat(np.asarray(inputs[k], float)[None], lanes, axis=0) for k in keys]


KEYS = {"dot": ("x", "y"), "givens_network_n100": ("x", "theta", "w"),
        "sparse_frobenius_dot": ("a_nzval", "b_nzval"), "petersen_embedding": ("x",),
        "adbench_gmm": ("alphas", "means", "icf"), "adbench_gmm_10k": ("alphas", "means", "icf"),
        "adbench_ba_x": ("rot", "c", "f", "x0", "k", "x", "w", "feat"),
        "adbench_ba_y": ("rot", "c", "f", "x0", "k", "x", "w", "feat")}
_GMM = ("adbench_gmm", "adbench_gmm_10k")


def numpy_baseline(name: str, inputs: dict, lanes: int) -> dict:
    _, workloads = _modules()
    if name in _GMM:
        seconds = best_seconds(lambda: workloads.gmm_objective(
            inputs["alphas"], inputs["means"], inputs["icf"], inputs["x"]), 5)
        return {"status": "measured", "what": WORKLOADS[name].numpy_what, "batch": 1,
                "seconds": seconds, "per_gradient_s": seconds}
    args = _batched(inputs, KEYS[name], lanes)
    if name == "dot":
        def step():
            x, y = args
            return np.sum(x * y, axis=1), y.copy(), x.copy()
    elif name == "givens_network_n100":
        batch = [a.T.copy() for a in args]  # givens_loss takes the batch axis last

        def step():
            return workloads.givens_loss(*batch)
    elif name in BA_ROWS:
        batch = [a.T.copy() for a in args]  # ba_reproj takes the batch axis last

        def step():
            return workloads.ba_reproj(*batch)
    elif name == "sparse_frobenius_dot":
        ia, ib = _sparse_matches(inputs)

        def step():
            a, b = args
            ga, gb = np.zeros_like(a), np.zeros_like(b)
            ga[:, ia] = b[:, ib]
            gb[:, ib] = a[:, ia]
            return np.sum(a[:, ia] * b[:, ib], axis=1), ga, gb
    else:
        (x,) = args

        def step():
            return _petersen(x, np)
    seconds = best_seconds(step, 3)
    return {"status": "measured", "what": WORKLOADS[name].numpy_what, "batch": lanes,
            "seconds": seconds, "per_gradient_s": seconds / lanes}


def _petersen(x, lib):
    """The Petersen embedding loss over a batch (x: batch x 10 x 5), summed over lanes."""
    cases, _ = _modules()
    u, v = np.array(cases.PAIR_U), np.array(cases.PAIR_V)
    d = lib.sqrt(lib.sum((x[:, u] - x[:, v]) ** 2, -1))
    d1, d2 = d[:, :15], d[:, 15:]
    m = d1.mean(1) - d2.mean(1) + 0.1
    var1 = lib.sum((d1 - d1.mean(1)[:, None]) ** 2, 1) / 14
    var2 = lib.sum((d2 - d2.mean(1)[:, None]) ** 2, 1) / 29
    return lib.sum(var1 + var2 + lib.where(m > 0, lib.exp(m) - 1, 0 * m))


def _ba_error(lib: Any, rot: Any, c: Any, f: Any, x0: Any, k: Any, x: Any, w: Any,
              feat: Any) -> Any:
    """ADBench's reprojection error (``workloads.ba_reproj``) in ``lib`` (jax.numpy or
    torch), the batch axis last."""
    xo = x - c
    theta = lib.sqrt(rot[0] * rot[0] + rot[1] * rot[1] + rot[2] * rot[2])
    u = rot / theta
    ux = lib.stack([u[1] * xo[2] - u[2] * xo[1], u[2] * xo[0] - u[0] * xo[2],
                    u[0] * xo[1] - u[1] * xo[0]])
    along = (u[0] * xo[0] + u[1] * xo[1] + u[2] * xo[2]) * (1 - lib.cos(theta))
    xcam = xo * lib.cos(theta) + ux * lib.sin(theta) + u * along
    p = xcam[:2] / xcam[2]
    rsq = p[0] * p[0] + p[1] * p[1]
    p = p * (1 + k[0] * rsq + k[1] * rsq * rsq)
    return w * (f * p + x0 - feat)


def _absent(library: str) -> dict:
    return {"status": "absent", "reason": f"{library} not installed: {COMPARE_NOTE}"}


def jax_baseline(name: str, inputs: dict, lanes: int) -> dict:
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return _absent("jax")
    jax.config.update("jax_enable_x64", True)
    _, workloads = _modules()
    if name in _GMM:
        gmm = jax_gmm_loss(inputs["x"], workloads.gmm_constant())
        args = [jnp.asarray(np.asarray(inputs[k], float)) for k in KEYS[name]]
        function = jax.jit(jax.grad(gmm, argnums=(0, 1, 2)))
        lanes, what = 1, "jit(grad), one gradient"
    else:
        loss: Callable[..., Any]  # the workload's loss, of its own arguments
        if name == "dot":
            def dot(x, y):
                return jnp.dot(x, y)
            loss = dot
        elif name == "givens_network_n100":
            pairs = jnp.asarray(workloads._givens_pairs(workloads.GIVENS_N))

            def givens(x, theta, w):
                def body(k, v):
                    i = pairs[k]
                    c, s = jnp.cos(theta[k]), jnp.sin(theta[k])
                    a, b = v[i], v[i + 1]
                    return v.at[i].set(a * c - b * s).at[i + 1].set(a * s + b * c)
                return jnp.dot(w, jax.lax.fori_loop(0, len(pairs), body, x))
            loss = givens
        elif name in BA_ROWS:
            row = BA_ROWS.index(name)

            def ba(*parameters):
                return _ba_error(jnp, *parameters)[row]
            loss = ba
        elif name == "sparse_frobenius_dot":
            ia, ib = (jnp.asarray(k) for k in _sparse_matches(inputs))

            def sparse_dot(a, b):
                return jnp.sum(a[ia] * b[ib])
            loss = sparse_dot
        else:
            def petersen(x):
                return _petersen(x[None], jnp)
            loss = petersen

        args = [jnp.asarray(a) for a in _batched(inputs, KEYS[name], lanes)]
        function = jax.jit(jax.vmap(jax.grad(loss, argnums=tuple(range(len(args))))))
        what = "jit(vmap(grad)) over the batch"
    jax.block_until_ready(function(*args))  # compile outside the timing
    seconds = best_seconds(lambda: jax.block_until_ready(function(*args)), 3)
    return {"status": "measured", "version": jax.__version__, "what": what, "batch": lanes,
            "seconds": seconds, "per_gradient_s": seconds / lanes}


def torch_baseline(name: str, inputs: dict, lanes: int) -> dict:
    try:
        import torch
    except ImportError:
        return _absent("torch")
    _, workloads = _modules()
    loss: Callable[..., Any]  # the workload's loss, of its own arguments
    if name in _GMM:
        lanes = 1
        x = torch.tensor(inputs["x"], dtype=torch.float64)
        n = len(inputs["x"])

        def gmm(alphas, means, icf):
            qd = torch.exp(icf[:, :2])
            centred = x[:, None, :] - means[None, :, :]
            y0 = qd[:, 0] * centred[:, :, 0]
            y1 = qd[:, 1] * centred[:, :, 1] + icf[:, 2] * centred[:, :, 0]
            main = alphas + icf[:, 0] + icf[:, 1] - 0.5 * (y0 ** 2 + y1 ** 2)
            prior = torch.sum(0.5 * (torch.sum(qd ** 2, 1) + icf[:, 2] ** 2))
            return (workloads.gmm_constant() + torch.logsumexp(main, 1).sum()
                    - n * torch.logsumexp(alphas, 0) + prior)
        loss = gmm

        args = [torch.tensor(inputs[k], dtype=torch.float64, requires_grad=True)
                for k in KEYS[name]]
        what = "autograd, one gradient"
    else:
        if name == "dot":
            def dot(x, y):
                return torch.sum(x * y)
            loss = dot
        elif name == "givens_network_n100":
            pairs = workloads._givens_pairs(workloads.GIVENS_N)

            def givens(x, theta, w):
                # columns, not slices: a slice's backward would fill a whole-size zero
                # gradient for each of the 4950 angles
                columns = list(x.unbind(1))
                cos, sin = torch.cos(theta).unbind(1), torch.sin(theta).unbind(1)
                for k, i in enumerate(pairs):
                    a, b, c, s = columns[i], columns[i + 1], cos[k], sin[k]
                    columns[i], columns[i + 1] = a * c - b * s, a * s + b * c
                return torch.sum(w * torch.stack(columns, 1))
            loss = givens
        elif name in BA_ROWS:
            row = BA_ROWS.index(name)

            def ba(*parameters):  # the batch axis first: each parameter moved last
                return torch.sum(_ba_error(torch, *(p.T for p in parameters))[row])
            loss = ba
        elif name == "sparse_frobenius_dot":
            ia, ib = (torch.from_numpy(k) for k in _sparse_matches(inputs))

            def sparse_dot(a, b):
                return torch.sum(a[:, ia] * b[:, ib])
            loss = sparse_dot
        else:
            def petersen(x):
                return _petersen(x, torch)
            loss = petersen

        args = [torch.tensor(a, requires_grad=True)
                for a in _batched(inputs, KEYS[name], lanes)]
        what = "autograd over the batch (lanes are independent: the sum's gradient)"

    def step():
        return torch.autograd.grad(loss(*args), args)
    step()
    seconds = best_seconds(step, 3)
    return {"status": "measured", "version": torch.__version__, "what": what, "batch": lanes,
            "seconds": seconds, "per_gradient_s": seconds / lanes}


def measure(name: str, lanes: int, budget: float) -> dict:
    inputs = inputs_of(name)
    out: dict = {"program": f"examples/nilang/{WORKLOADS[name].file}:{WORKLOADS[name].entry}",
                 "width": 64, "compiled": compiled(name, lanes, budget)}
    revasm = out["compiled"]
    if revasm["status"] == "measured":
        reference = reference_gradient(name, inputs)
        errors = [np.max(np.abs(np.asarray(revasm["gradient_lane_0"][k]) - np.ravel(v)))
                  for k, v in reference.items()]
        revasm["max_abs_error_gradient"] = float(max(errors))
        revasm["checked_against_float64"] = list(reference)
        del revasm["gradient_lane_0"]
    out["numpy_float64"] = numpy_baseline(name, inputs, lanes)
    out["jax"] = jax_baseline(name, inputs, lanes)
    out["pytorch"] = torch_baseline(name, inputs, lanes)
    out["status"] = revasm["status"]
    if revasm["status"] == "measured":
        for other in ("numpy_float64", "jax", "pytorch"):
            if out[other]["status"] == "measured":
                out[f"ratio_to_{other}"] = (revasm["per_gradient_s"]
                                            / out[other]["per_gradient_s"])
    return out


def run(quick: bool) -> dict:
    names = QUICK if quick else {name: w.lanes for name, w in WORKLOADS.items()}
    budget = QUICK_BUDGET_S if quick else BUDGET_S
    workloads: dict = {}
    for name in WORKLOADS:
        if name not in names:
            workloads[name] = {"status": "skipped", "reason": "full run only (--quick runs "
                               "dot: large programs take minutes to compile)"}
            continue
        try:
            workloads[name] = measure(name, names[name], budget)
        except Exception as exc:  # one workload failing must not hide the others
            workloads[name] = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
    measured = [w for w in workloads.values() if w["status"] == "measured"]
    return {"status": "measured" if len(measured) == len(names) else "partial",
            "engine": "compiled", "budget_s": budget,
            "frameworks": {lib: _version(lib) for lib in ("jax", "torch")},
            "workloads": workloads, "ba_jacobian": ba_jacobian(workloads)}


def ba_jacobian(workloads: dict) -> dict:
    """BA's 2 x 15 Jacobian per observation: its two rows' gradients, each timed on its own
    batch, side by side with each framework's (one gradient per row too)."""
    rows = [workloads.get(name, {}) for name in BA_ROWS]
    if not all(row.get("status") == "measured" for row in rows):
        return {"status": "not measured", "reason": "a row was not measured"}
    out: dict = {"status": "measured", "rows": list(BA_ROWS),
                 "instructions_per_jacobian": sum(row["compiled"]["instructions_per_gradient"]
                                                  for row in rows),
                 "per_observation_s": {}}
    for key, label in (("compiled", "revasm_compiled"), ("numpy_float64", "numpy_float64"),
                       ("jax", "jax"), ("pytorch", "pytorch")):
        if all(row[key]["status"] == "measured" for row in rows):
            out["per_observation_s"][label] = sum(row[key]["per_gradient_s"] for row in rows)
        else:
            out["per_observation_s"][label] = rows[0][key].get("reason", "not measured")
    return out


def _version(library: str) -> str:
    try:
        return __import__(library).__version__
    except ImportError:
        return f"not installed: {COMPARE_NOTE}"

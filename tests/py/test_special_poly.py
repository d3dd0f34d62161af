"""torch.special's orthogonal polynomials, bit for bit.

rlx evaluates each polynomial with torch's own float algorithm in torch's
type (src/ops/special_poly.c: the recurrence with its fused multiply-adds,
the trigonometric closed forms, the special cases, in torch's order), so its
results are not near torch's but equal to them: every element of every
polynomial over 60,000 (x, n) pairs — the interval of orthogonality, its
ends, |x| up to 4, integer and fractional n from -2 to 200, the edge values
— is compared as bits (NaN equal to NaN), in float32 and float64.
"""

import numpy as np
import pytest
import torch

from conftest import run_rlx
from rlx.export import export_program

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
         "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]
EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan]


class Prog(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, n):
        return self.fn(x, n)


def _grid(seed):
    rng = np.random.default_rng(seed)
    N = 20000
    x = np.concatenate([rng.uniform(-1.2, 1.2, N), rng.uniform(-0.1, 1.1, N), rng.uniform(-4, 4, N), EDGES * 30])
    n = np.concatenate([rng.integers(-2, 40, len(x) - 300).astype(np.float64), rng.uniform(-3, 200, 300)])
    rng.shuffle(n)
    return x, n


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", NAMES)
def test_bits(name, dtype, rlx_bin, tmp_path):
    fn = getattr(torch.special, name)
    x, n = _grid(NAMES.index(name))
    X, Nn = torch.tensor(x, dtype=dtype), torch.tensor(n, dtype=dtype)
    export_program(Prog(fn), (X, Nn), tmp_path / "p", decomposition="aten", check=False, write_reference=False)
    np.save(tmp_path / "x.npy", X.numpy())
    np.save(tmp_path / "n.npy", Nn.numpy())
    r = run_rlx(rlx_bin, "run", tmp_path / "p", "--input", f"x={tmp_path / 'x.npy'}",
                "--input", f"n={tmp_path / 'n.npy'}", "--output-dir", tmp_path / "o")
    assert r.returncode == 0, r.stderr
    got, want = np.load(tmp_path / "o" / "out_0.npy"), fn(X, Nn).numpy()
    assert got.dtype == want.dtype
    same = (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))
    bad = np.nonzero(~same)[0]
    assert not len(bad), (f"{name}: {len(bad)} of {len(got)} elements differ; first x={x[bad[0]]!r} "
                          f"n={n[bad[0]]!r} rlx={got[bad[0]]!r} torch={want[bad[0]]!r}")

"""Audit of reported rank statistics: are tau, rho and displacement mutually consistent?

Two rankings of n items without ties are one permutation ``p`` (item at rank
``i`` in the first ranking has rank ``p[i]`` in the second). Its statistics are
integers in disguise:

* Kendall tau = ``1 - 2 I / N`` with ``I`` the discordant pairs (inversions of
  ``p``) and ``N = n (n - 1) / 2``;
* Spearman rho = ``1 - 6 S2 / (n (n^2 - 1))`` with ``S2 = sum (p[i] - i)^2``;
* mean absolute displacement = ``S1 / n`` with ``S1 = sum |p[i] - i|``.

A value reported with ``k`` decimals admits the exact values within half a unit
of the last decimal, hence a finite, exhaustively enumerated set of integer
targets: ``I`` in 0..N, ``S2`` even in 0..(n^3 - n)/3, ``S1`` even in
0..floor(n^2/2) (both sums are even because ``sum (p[i] - i) = 0``). Triples
violating the Diaconis-Graham inequality ``I <= S1 <= 2 I`` (Diaconis & Graham
1977, "Spearman's footrule as a measure of disarray") or ``S1 <= S2`` (since
``d^2 >= |d|`` for integers) are impossible. For the rest a permutation is
searched: exhaustively for n <= 8, otherwise by a seeded simulated annealing
over transpositions whose cost is the distance to the target triple (exact
incremental updates, O(n) per move). Finding one proves consistency; for
n > 8 not finding one within the budget leaves the question *undetermined*.
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass

import numpy as np

from crsbench_lib.errors import ConfigError
from crsbench_lib.scoring.agreement import rank_agreement

#: Largest n for which every permutation is enumerated.
EXHAUSTIVE_MAX_N = 8
#: Simulated-annealing moves per target triple (and restart length).
DEFAULT_MAX_STEPS = 200_000
_RESTART_STEPS = 20_000
# Slack for float representation when comparing a candidate value to a rounding interval.
_EPS = 1e-12


@dataclass(frozen=True)
class ConsistencyResult:
    """Outcome of :func:`check_rank_statistics`.

    Attributes
    ----------
    status : {"consistent", "inconsistent", "undetermined"}
    n : int
    admissible_discordant, admissible_sum_sq, admissible_sum_abs : tuple of int
        The integer targets that the reported values (with their rounding) admit.
    permutation : tuple of int or None
        A witness: 1-based second-ranking rank of the item at first-ranking
        rank 1, 2, ..., n.
    discordant, sum_sq, sum_abs : int or None
        The witness's integer statistics.
    tau, rho, mean_displacement : float or None
        The witness's exact statistics (recomputed with
        :func:`~crsbench_lib.scoring.agreement.rank_agreement`).
    reason : str
        One line saying why.
    """

    status: str
    n: int
    admissible_discordant: tuple[int, ...]
    admissible_sum_sq: tuple[int, ...]
    admissible_sum_abs: tuple[int, ...]
    permutation: tuple[int, ...] | None = None
    discordant: int | None = None
    sum_sq: int | None = None
    sum_abs: int | None = None
    tau: float | None = None
    rho: float | None = None
    mean_displacement: float | None = None
    reason: str = ""

    @property
    def consistent(self) -> bool:
        """True when a realising permutation was found."""
        return self.status == "consistent"


def _half_unit(decimals: int) -> float:
    if isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0:
        raise ConfigError(f"rounding decimals must be a non-negative integer, found {decimals!r}")
    return 0.5 * 10.0 ** (-decimals)


def admissible_discordant(n: int, tau: float | None, decimals: int) -> list[int]:
    """Discordant-pair counts I with round(1 - 2I/N, decimals) == tau."""
    pairs = n * (n - 1) // 2
    if tau is None:
        return list(range(pairs + 1))
    half = _half_unit(decimals)
    return [i for i in range(pairs + 1) if abs(1.0 - 2.0 * i / pairs - tau) <= half + _EPS]


def admissible_sum_sq(n: int, rho: float | None, decimals: int) -> list[int]:
    """Even S2 with round(1 - 6 S2 / (n^3 - n), decimals) == rho."""
    top = (n**3 - n) // 3
    if rho is None:
        return list(range(0, top + 1, 2))
    half = _half_unit(decimals)
    return [s for s in range(0, top + 1, 2) if abs(1.0 - 6.0 * s / (n**3 - n) - rho) <= half + _EPS]


def admissible_sum_abs(n: int, displacement: float | None, decimals: int) -> list[int]:
    """Even S1 with round(S1 / n, decimals) == displacement."""
    top = n * n // 2
    if displacement is None:
        return list(range(0, top + 1, 2))
    half = _half_unit(decimals)
    return [s for s in range(0, top + 1, 2) if abs(s / n - displacement) <= half + _EPS]


def permutation_statistics(perm: np.ndarray | list[int]) -> tuple[int, int, int]:
    """(inversions, sum of squared displacements, sum of absolute displacements) of a 0-based permutation."""
    p = np.asarray(perm, dtype=np.int64)
    i, j = np.triu_indices(p.size, k=1)
    d = p - np.arange(p.size)
    return int((p[i] > p[j]).sum()), int((d * d).sum()), int(np.abs(d).sum())


def _exhaustive(n: int, targets: set[tuple[int, int, int]]) -> list[int] | None:
    perms = np.array(list(itertools.permutations(range(n))), dtype=np.int64).reshape(-1, n)
    i, j = np.triu_indices(n, k=1)
    inv = (perms[:, i] > perms[:, j]).sum(axis=1)
    d = perms - np.arange(n)[None, :]
    s2 = (d * d).sum(axis=1)
    s1 = np.abs(d).sum(axis=1)
    # One integer key per triple, so the match is a single vectorised isin.
    span_s1, span_s2 = n * n + 1, n**3 + 1
    keys = (inv * span_s2 + s2) * span_s1 + s1
    wanted = np.array([(i * span_s2 + b) * span_s1 + a for i, b, a in targets], dtype=np.int64)
    hits = np.flatnonzero(np.isin(keys, wanted))
    return perms[hits[0]].tolist() if hits.size else None


def _anneal(n: int, target: tuple[int, int, int], max_steps: int, rng: random.Random) -> list[int] | None:
    t_inv, t_s2, t_s1 = target
    steps = 0
    while steps < max_steps:
        p = list(range(n))
        rng.shuffle(p)
        inv, s2, s1 = permutation_statistics(p)
        cost = abs(inv - t_inv) + abs(s2 - t_s2) / 2 + abs(s1 - t_s1) / 2
        for step in range(_RESTART_STEPS):
            if cost == 0:
                return p
            steps += 1
            if steps >= max_steps:
                break
            temperature = 2.0 * (1.0 - step / _RESTART_STEPS) + 0.05
            if rng.random() < 0.5:
                i = rng.randrange(n - 1)
                j = i + 1
            else:
                i, j = sorted(rng.sample(range(n), 2))
            a, b = p[i], p[j]
            # Inversion change of swapping positions i < j: the pair itself, and every
            # value strictly between a and b that sits between the two positions.
            between = sum(1 for k in range(i + 1, j) if min(a, b) < p[k] < max(a, b))
            d_inv = (1 + 2 * between) if a < b else -(1 + 2 * between)
            new_inv = inv + d_inv
            old = (a - i) ** 2 + (b - j) ** 2, abs(a - i) + abs(b - j)
            new = (b - i) ** 2 + (a - j) ** 2, abs(b - i) + abs(a - j)
            new_s2 = s2 - old[0] + new[0]
            new_s1 = s1 - old[1] + new[1]
            new_cost = abs(new_inv - t_inv) + abs(new_s2 - t_s2) / 2 + abs(new_s1 - t_s1) / 2
            if new_cost <= cost or rng.random() < math.exp((cost - new_cost) / temperature):
                p[i], p[j] = b, a
                inv, s2, s1, cost = new_inv, new_s2, new_s1, new_cost
    return None


def check_rank_statistics(
    n: int,
    tau: float | None = None,
    rho: float | None = None,
    mean_displacement: float | None = None,
    *,
    tau_decimals: int = 3,
    rho_decimals: int = 3,
    displacement_decimals: int = 2,
    random_state: int = 0,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> ConsistencyResult:
    """Decide whether reported tau, rho and mean displacement fit one permutation of n items.

    Parameters
    ----------
    n : int
        Number of ranked items (no ties), n >= 2.
    tau, rho, mean_displacement : float or None
        Reported values; ``None`` leaves a statistic unconstrained.
    tau_decimals, rho_decimals, displacement_decimals : int
        Decimals they were reported with.
    random_state : int
        Seed of the search (the result is deterministic).
    max_steps : int
        Search moves per admissible target triple (n > 8).

    Returns
    -------
    ConsistencyResult
        ``consistent`` with a witness permutation, ``inconsistent`` with the
        reason (no admissible integers, impossible triples, or, for n <= 8, no
        permutation at all), or ``undetermined`` (n > 8, search budget spent).

    Raises
    ------
    ConfigError
        If n < 2 or a decimals count is invalid.

    Examples
    --------
    >>> check_rank_statistics(15, 0.600, 0.811, 1.87).consistent
    True
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ConfigError(f"parameter 'n' must be an integer >= 2, found {n!r}")
    inv_t = admissible_discordant(n, tau, tau_decimals)
    s2_t = admissible_sum_sq(n, rho, rho_decimals)
    s1_t = admissible_sum_abs(n, mean_displacement, displacement_decimals)
    base = {
        "n": n,
        "admissible_discordant": tuple(inv_t) if tau is not None else (),
        "admissible_sum_sq": tuple(s2_t) if rho is not None else (),
        "admissible_sum_abs": tuple(s1_t) if mean_displacement is not None else (),
    }
    for name, values in (("tau", inv_t), ("rho", s2_t), ("mean displacement", s1_t)):
        if not values:
            return ConsistencyResult(
                status="inconsistent", reason=f"no exact value of {name} for n = {n} rounds to the reported one", **base
            )
    triples = [
        (i, s2, s1)
        for i in inv_t
        for s1 in s1_t
        if i <= s1 <= 2 * i
        for s2 in s2_t
        if s1 <= s2
    ]
    if not triples:
        return ConsistencyResult(
            status="inconsistent",
            reason="every admissible (discordant, sum |d|, sum d^2) triple breaks I <= S1 <= 2I or S1 <= S2",
            **base,
        )
    witness: list[int] | None = None
    if n <= EXHAUSTIVE_MAX_N:
        witness = _exhaustive(n, set(triples))
        if witness is None:
            return ConsistencyResult(
                status="inconsistent", reason=f"no permutation of {n} items realises any admissible triple", **base
            )
    else:
        rng = random.Random(random_state)
        for triple in triples:
            witness = _anneal(n, triple, max_steps, rng)
            if witness is not None:
                break
        if witness is None:
            return ConsistencyResult(
                status="undetermined",
                reason=f"no permutation found within {max_steps} moves for each of {len(triples)} admissible triples",
                **base,
            )
    inv, s2, s1 = permutation_statistics(witness)
    first = np.arange(n, 0, -1, dtype=float)  # item i has rank i + 1 in the first ranking
    second = n - np.asarray(witness, dtype=float)
    agreement = rank_agreement(first, second)
    return ConsistencyResult(
        status="consistent",
        permutation=tuple(int(v) + 1 for v in witness),
        discordant=inv,
        sum_sq=s2,
        sum_abs=s1,
        tau=agreement.tau_b,
        rho=agreement.rho,
        mean_displacement=agreement.mean_abs_displacement,
        reason=f"the permutation has {inv} discordant pairs, sum d^2 = {s2}, sum |d| = {s1}",
        **base,
    )


def check_published(random_state: int = 0) -> ConsistencyResult:
    """The audit applied to the study's reported tau, rho and displacement."""
    from crsbench_lib.scoring.published import PUBLISHED

    return check_rank_statistics(
        PUBLISHED.n_encoders,
        PUBLISHED.kendall_tau,
        PUBLISHED.spearman_rho,
        PUBLISHED.mean_abs_displacement,
        tau_decimals=PUBLISHED.kendall_tau_decimals,
        rho_decimals=PUBLISHED.spearman_rho_decimals,
        displacement_decimals=PUBLISHED.mean_abs_displacement_decimals,
        random_state=random_state,
    )

"""Donner & Eliasziw (1992) forms (`plan size --lower/--width/--null`) against R kappaSize.

Printed published values: none could be retrieved here.  Searched (stored public pages, package
documentation and public source): Donner & Eliasziw 1992 (Stat Med 11:1511-19) tables; Sim &
Wright 2005 (Phys Ther 85:257-68) Table 7 (the stored copies surface only its first page); Rotondi & Donner 2012
(J Clin Epidemiol 65:778-84); Shoukri, Asyali & Donner 2004 (Stat Methods Med Res 13:251-71);
the kappaSize manual and its rdrr.io pages (the examples show no output there).

Peer reference values instead: the outputs of R kappaSize 1.2 (CRAN, 2018-11-26; Rotondi), the
package the README names as the R equivalent, computed on R 4.2.2 with two raters and alpha 0.05
(the functions' printed integers: ``ceiling(N)`` for Power*, ``n`` for CI*, ``kappaL`` for FixedN*).
Computed, not printed outputs (as the irrCAC outputs in test_agreement.py are).  Rows marked
``man-example`` are the kappaSize manual's own examples; ``man-example-inputs-2-raters`` use a
manual example's inputs with two raters (the manual's use 3-5 raters, which goldboard does not plan).

Known differences, none of which changes a value below: kappaSize's CI search starts at 11
subjects and stops at ``n * GOF >= critical + 0.001``; its non-centrality is a bisection to 1e-5
(its unrounded N is 0.001-0.02 above the exact one); FixedN* steps kappaL down by 0.001 from kappa0,
so it prints the exact limit rounded down to 3 decimals.
"""

from __future__ import annotations

import math

import pytest

from goldboard.analysis import planning as pl


@pytest.mark.parametrize(
    ("kappa0", "kappa1", "prevalence", "power", "expected"),
    [
        pytest.param(0.2, 0.4, 0.1, 0.8, 375, id="PowerBinary(0.2,0.4,0.1,power=0.8)=375"),
        pytest.param(0.2, 0.4, 0.3, 0.8, 209, id="PowerBinary(0.2,0.4,0.3,power=0.8)=209"),
        pytest.param(0.2, 0.4, 0.5, 0.8, 189, id="PowerBinary(0.2,0.4,0.5,power=0.8)=189"),
        pytest.param(0.2, 0.5, 0.1, 0.8, 167, id="PowerBinary(0.2,0.5,0.1,power=0.8)=167"),
        pytest.param(0.2, 0.5, 0.3, 0.8, 93, id="PowerBinary(0.2,0.5,0.3,power=0.8)=93"),
        pytest.param(0.2, 0.5, 0.5, 0.8, 84, id="PowerBinary(0.2,0.5,0.5,power=0.8)=84"),
        pytest.param(0.4, 0.6, 0.1, 0.8, 405, id="PowerBinary(0.4,0.6,0.1,power=0.8)=405"),
        pytest.param(0.4, 0.6, 0.3, 0.8, 191, id="PowerBinary(0.4,0.6,0.3,power=0.8)=191-man-example"),
        pytest.param(0.4, 0.6, 0.5, 0.8, 165, id="PowerBinary(0.4,0.6,0.5,power=0.8)=165"),
        pytest.param(0.4, 0.7, 0.1, 0.8, 180, id="PowerBinary(0.4,0.7,0.1,power=0.8)=180"),
        pytest.param(0.4, 0.7, 0.3, 0.8, 85, id="PowerBinary(0.4,0.7,0.3,power=0.8)=85"),
        pytest.param(0.4, 0.7, 0.5, 0.8, 74, id="PowerBinary(0.4,0.7,0.5,power=0.8)=74"),
        pytest.param(0.6, 0.8, 0.1, 0.8, 335, id="PowerBinary(0.6,0.8,0.1,power=0.8)=335"),
        pytest.param(0.6, 0.8, 0.3, 0.8, 149, id="PowerBinary(0.6,0.8,0.3,power=0.8)=149"),
        pytest.param(0.6, 0.8, 0.5, 0.8, 126, id="PowerBinary(0.6,0.8,0.5,power=0.8)=126"),
        pytest.param(0.6, 0.9, 0.1, 0.8, 149, id="PowerBinary(0.6,0.9,0.1,power=0.8)=149"),
        pytest.param(0.6, 0.9, 0.3, 0.8, 66, id="PowerBinary(0.6,0.9,0.3,power=0.8)=66"),
        pytest.param(0.6, 0.9, 0.5, 0.8, 56, id="PowerBinary(0.6,0.9,0.5,power=0.8)=56"),
        pytest.param(0.2, 0.4, 0.1, 0.9, 502, id="PowerBinary(0.2,0.4,0.1,power=0.9)=502"),
        pytest.param(0.2, 0.4, 0.3, 0.9, 279, id="PowerBinary(0.2,0.4,0.3,power=0.9)=279"),
        pytest.param(0.2, 0.4, 0.5, 0.9, 253, id="PowerBinary(0.2,0.4,0.5,power=0.9)=253"),
        pytest.param(0.2, 0.5, 0.1, 0.9, 223, id="PowerBinary(0.2,0.5,0.1,power=0.9)=223"),
        pytest.param(0.2, 0.5, 0.3, 0.9, 124, id="PowerBinary(0.2,0.5,0.3,power=0.9)=124"),
        pytest.param(0.2, 0.5, 0.5, 0.9, 113, id="PowerBinary(0.2,0.5,0.5,power=0.9)=113"),
        pytest.param(0.4, 0.6, 0.1, 0.9, 541, id="PowerBinary(0.4,0.6,0.1,power=0.9)=541"),
        pytest.param(0.4, 0.6, 0.3, 0.9, 255, id="PowerBinary(0.4,0.6,0.3,power=0.9)=255"),
        pytest.param(0.4, 0.6, 0.5, 0.9, 221, id="PowerBinary(0.4,0.6,0.5,power=0.9)=221"),
        pytest.param(0.4, 0.7, 0.1, 0.9, 241, id="PowerBinary(0.4,0.7,0.1,power=0.9)=241"),
        pytest.param(0.4, 0.7, 0.3, 0.9, 114, id="PowerBinary(0.4,0.7,0.3,power=0.9)=114"),
        pytest.param(0.4, 0.7, 0.5, 0.9, 99, id="PowerBinary(0.4,0.7,0.5,power=0.9)=99"),
        pytest.param(0.6, 0.8, 0.1, 0.9, 449, id="PowerBinary(0.6,0.8,0.1,power=0.9)=449"),
        pytest.param(0.6, 0.8, 0.3, 0.9, 199, id="PowerBinary(0.6,0.8,0.3,power=0.9)=199"),
        pytest.param(0.6, 0.8, 0.5, 0.9, 169, id="PowerBinary(0.6,0.8,0.5,power=0.9)=169"),
        pytest.param(0.6, 0.9, 0.1, 0.9, 200, id="PowerBinary(0.6,0.9,0.1,power=0.9)=200"),
        pytest.param(0.6, 0.9, 0.3, 0.9, 89, id="PowerBinary(0.6,0.9,0.3,power=0.9)=89"),
        pytest.param(0.6, 0.9, 0.5, 0.9, 75, id="PowerBinary(0.6,0.9,0.5,power=0.9)=75"),
    ],
)
def test_power_binary_matches_kappasize(kappa0, kappa1, prevalence, power, expected):
    assert pl.power_sample_size(kappa1, kappa0, prevalence, alpha=0.05, power=power).n == expected


@pytest.mark.parametrize(
    ("kappa0", "kappa1", "props", "expected"),
    [
        pytest.param(0.4, 0.6, [0.3, 0.6, 0.1], 135, id="Power3Cats(0.4,0.6,c(0.3,0.6,0.1))=135-man-example"),
        pytest.param(0.4, 0.6, [0.3, 0.3, 0.3, 0.1], 92, id="Power4Cats(0.4,0.6,c(0.3,0.3,0.3,0.1))=92-man-example"),
        pytest.param(
            0.4, 0.6, [0.3, 0.2, 0.1, 0.3, 0.1], 83, id="Power5Cats(0.4,0.6,c(0.3,0.2,0.1,0.3,0.1))=83-man-example"
        ),
    ],
)
def test_power_categories_match_kappasize(kappa0, kappa1, props, expected):
    assert pl.power_sample_size(kappa1, kappa0, props, alpha=0.05, power=0.80).n == expected


@pytest.mark.parametrize(
    ("kappa0", "kappa_lower", "kappa_upper", "props", "expected"),
    [
        pytest.param(0.4, 0.3, 0.5, 0.3, 397, id="CIBinary(0.4,0.3,0.5,0.3)=397-man-example"),
        pytest.param(0.6, 0.4, None, 0.1, 140, id="CIBinary(0.6,0.4,NA,0.1)=140"),
        pytest.param(0.8, 0.6, None, 0.1, 116, id="CIBinary(0.8,0.6,NA,0.1)=116"),
        pytest.param(0.7, 0.5, 0.9, 0.1, 186, id="CIBinary(0.7,0.5,0.9,0.1)=186"),
        pytest.param(0.6, 0.4, None, 0.3, 66, id="CIBinary(0.6,0.4,NA,0.3)=66"),
        pytest.param(0.8, 0.6, None, 0.3, 52, id="CIBinary(0.8,0.6,NA,0.3)=52"),
        pytest.param(0.7, 0.5, 0.9, 0.3, 85, id="CIBinary(0.7,0.5,0.9,0.3)=85"),
        pytest.param(0.6, 0.4, None, 0.5, 57, id="CIBinary(0.6,0.4,NA,0.5)=57"),
        pytest.param(0.8, 0.6, None, 0.5, 44, id="CIBinary(0.8,0.6,NA,0.5)=44"),
        pytest.param(0.7, 0.5, 0.9, 0.5, 73, id="CIBinary(0.7,0.5,0.9,0.5)=73"),
        pytest.param(
            0.4, 0.3, 0.6, [0.3, 0.2, 0.5], 232, id="CI3Cats(0.4,0.3,0.6,0.3,0.2,0.5)=232-man-example-inputs-2-raters"
        ),
        pytest.param(0.7, 0.5, None, [0.2, 0.5, 0.3], 37, id="CI3Cats(0.7,0.5,NA,0.2,0.5,0.3)=37"),
        pytest.param(
            0.4, 0.3, 0.5, [0.3, 0.2, 0.2, 0.3], 174, id="CI4Cats(0.4,0.3,0.5,0.3,0.2,0.2,0.3)=174-man-example"
        ),
        pytest.param(
            0.4,
            0.3,
            0.5,
            [0.13, 0.17, 0.2, 0.2, 0.3],
            153,
            id="CI5Cats(0.4,0.3,0.5,0.13,0.17,0.2,0.2,0.3)=153-man-example",
        ),
    ],
)
def test_ci_form_matches_kappasize(kappa0, kappa_lower, kappa_upper, props, expected):
    assert pl.ci_sample_size(kappa0, kappa_lower, props, kappa_upper=kappa_upper, alpha=0.05).n == expected


@pytest.mark.parametrize(
    ("kappa0", "n", "props", "expected"),
    [
        pytest.param(0.7, 100, 0.5, 0.564, id="FixedNBinary(0.7,n=100,0.5)=0.564-man-example-inputs-2-raters"),
        pytest.param(0.6, 191, 0.3, 0.487, id="FixedNBinary(0.6,n=191,0.3)=0.487"),
        pytest.param(
            0.7,
            80,
            [0.33, 0.34, 0.33],
            0.575,
            id="FixedN3Cats(0.7,n=80,0.33,0.34,0.33)=0.575-man-example-inputs-2-raters",
        ),
        pytest.param(
            0.7,
            80,
            [0.4, 0.4, 0.1, 0.1],
            0.576,
            id="FixedN4Cats(0.7,n=80,0.4,0.4,0.1,0.1)=0.576-man-example-inputs-2-raters",
        ),
        pytest.param(
            0.6,
            150,
            [0.4, 0.2, 0.2, 0.1, 0.1],
            0.513,
            id="FixedN5Cats(0.6,n=150,0.4,0.2,0.2,0.1,0.1)=0.513-man-example",
        ),
    ],
)
def test_expected_lower_limit_matches_kappasize_fixed_n(kappa0, n, props, expected):
    exact = pl.expected_lower_bound(kappa0, n, props, alpha=0.05)
    assert math.floor(exact * 1000 + 1e-6) / 1000 == pytest.approx(expected, abs=1e-9)


def test_below_eleven_items_goldboard_is_smaller_than_kappasize():
    """CIBinary(0.9, 0.3, NA, 0.5) prints 11 (kappaSize 1.2): its search starts at 11.  The exact
    answer is 7 items: the expected limit clears 0.3 at 7 and not at 6."""
    plan = pl.ci_sample_size(0.9, 0.3, 0.5)
    assert plan.n == 7
    assert pl.expected_lower_bound(0.9, 7, 0.5) >= 0.3 > pl.expected_lower_bound(0.9, 6, 0.5)

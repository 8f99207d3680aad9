"""The batch functions' shared argument handling."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsteer.envs.kernels.bundle import row_counts, typed_params
from crowdsteer.envs.steering import (
    Bodies,
    Neighbours,
    PathFollowParams,
    orca,
    path_follow_projected,
)


def test_typed_params_keeps_every_field_and_its_type():
    p = typed_params(PathFollowParams, PathFollowParams(offset=2, follow_corners=0, node_radius=1))
    assert p == PathFollowParams(offset=2.0, follow_corners=False, node_radius=1.0)
    assert type(p.offset) is float and type(p.follow_corners) is bool
    assert typed_params(PathFollowParams, None) == PathFollowParams()


def test_node_radius_reaches_the_path_follower():
    # on the first segment, 0.3 m short of its end node: a 0.5 m node radius moves on, 0.1 does not
    pos = np.array([[0.7, 0.0]])
    path = np.array([[[0.0, 0.0], [1.0, 0.0], [1.0, 5.0]]])
    _, seg_far = path_follow_projected(pos, path, 3, 0, PathFollowParams(node_radius=0.5))
    _, seg_near = path_follow_projected(pos, path, 3, 0, PathFollowParams(node_radius=0.1))
    assert seg_far[0] == 1 and seg_near[0] == 0


def test_counts_and_shapes_are_checked_with_the_argument_named():
    assert row_counts("n_nb", None, 3, 4).tolist() == [4, 4, 4]
    with pytest.raises(ValueError, match=r"n_nb must lie in \[0, K\]"):
        row_counts("n_nb", [1, 5, 0], 3, 4)
    with pytest.raises(ValueError, match=r"neighbours.pos must be \(A, K, 2\) with A = 2"):
        orca(
            Bodies(np.zeros((2, 2)), np.zeros((2, 2)), radius=0.3),
            np.zeros((2, 2)),
            1.0,
            Neighbours(np.zeros((3, 1, 2)), np.zeros((3, 1)), 1, np.zeros((3, 1, 2))),
        )


def test_bundles_are_typed_as_the_tuples_they_are_without_a_lookup():
    from typing import NamedTuple

    import numba
    from numba.extending import typeof_impl

    from crowdsteer.envs.kernels.bundle import bundle

    class Plain(NamedTuple):
        a: np.ndarray
        x: float

    @bundle
    class Registered(NamedTuple):
        a: np.ndarray
        x: float

    values = (np.zeros((2, 3)), 1.5)
    plain, registered = numba.typeof(Plain(*values)), numba.typeof(Registered(*values))
    assert registered.types == plain.types and registered.instance_class is Registered
    assert Registered in typeof_impl.registry and Plain not in typeof_impl.registry


def test_every_bundle_the_step_takes_is_registered():
    from numba.extending import typeof_impl

    from crowdsteer.envs import CrowdConfig, make_batch

    batch = make_batch(CrowdConfig(), 1)
    sim = batch.sim
    bundles = [
        sim.state,
        sim.buffers,
        sim.params,
        sim.scratch[0],
        sim.scratch[0].sense,
        sim.scratch[0].cells,
        batch.learners,
        sim.params.rewards,
        sim.params.observe,
        batch._observe_scratch[0],
        *sim.params.steering,
    ]
    missing = [type(b).__name__ for b in bundles if type(b) not in typeof_impl.registry]
    assert missing == []

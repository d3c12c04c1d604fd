"""Analytical models that sit beside the simulator: closed forms to check it against.

``rove.models.mptcp_delay`` holds seed 003's delay models of multipath TCP (Park, SNU 2016,
Ch. 2 and Ch. 3): the application-level delay terms, the MPTCP-TSC estimators and allocator,
the time-varying-RTT rate models of Reno and MPTCP-LIA, the delay-minimisation solver and the
window-threshold search. Pure Python on numpy and scipy; no engine needed.
"""

from . import mptcp_delay

__all__ = ["mptcp_delay"]

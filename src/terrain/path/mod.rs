//! Roads, rivers and routes: a [`spec::PathSpec`] is checked, routed when
//! only endpoints are given ([`route`]), sampled along a centripetal
//! Catmull–Rom spline ([`spline`]), profiled over the surface it crosses
//! ([`surface`], [`profile`], [`bed`]) and carved into cells ([`carve`]);
//! [`tool::apply_path`] runs the whole chain as one recorded operation.

pub mod bed;
pub mod carve;
pub mod profile;
pub mod route;
pub mod spec;
pub mod spline;
pub mod surface;
pub mod tool;

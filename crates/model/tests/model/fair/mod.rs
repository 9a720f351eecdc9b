//! The fair class: EEVDF (and pre-v6.6 CFS) placement, preemption and pick order.

mod eevdf;
mod tree_order;
